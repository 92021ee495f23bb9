"""Evaluation job of a pipeline: under a distributed launch with CUDA each process takes
its local GPU; otherwise the first GPU when there is one, else the CPU. The `"cuda:0"`
sits in the `else` of `distributed and torch.cuda.is_available()` and is chosen only when
CUDA is available, so only the one-process run uses it."""
import os

import torch
import torch.distributed as dist


def main(model, loader):
    world_size = int(os.environ.get("WORLD_SIZE", 1))
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    distributed = world_size > 1
    if distributed and torch.cuda.is_available():
        device = torch.device("cuda", local_rank)
    else:
        device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    if distributed:
        dist.init_process_group("nccl" if torch.cuda.is_available() else "gloo")
    model = model.to(device).eval()
    correct = total = 0
    with torch.no_grad():
        for images, labels in loader:
            predicted = model(images.to(device)).argmax(1).cpu()
            correct += (predicted == labels).sum().item()
            total += labels.numel()
    print(f"accuracy {correct / max(total, 1):.3f}")


def tuned_main(model, loader, fast):
    """The same job where the per-process device also needs a flag: a distributed run
    without `fast` takes the `else` too, and every process lands on the first GPU."""
    distributed = int(os.environ.get("WORLD_SIZE", 1)) > 1
    if distributed and fast:
        device = torch.device("cuda", int(os.environ["LOCAL_RANK"]))
    else:
        device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")  # expect: DDP001
    if distributed:
        dist.init_process_group("nccl")
    return model.to(device)

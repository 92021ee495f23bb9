"""An evaluation script meant to run both alone and under torchrun: the barrier and the
world size are guarded by `dist.is_initialized` without its call, which is always true,
so a one-process run calls `dist.barrier()` with no process group and raises."""
import argparse

import torch
import torch.distributed as dist


def world_size():
    return dist.get_world_size() if dist.is_initialized else 1  # expect: DDP065


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    correct = seen = 0
    for images, labels in loader:
        correct += (model(images.to(device)).argmax(1) == labels.to(device)).sum().item()
        seen += labels.numel()
    if torch.distributed.is_initialized:  # expect: DDP065
        dist.barrier()
    return correct / max(seen, 1), world_size()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--checkpoint", required=True)
    args = parser.parse_args()
    model = torch.load(args.checkpoint, map_location="cpu", weights_only=False)
    print(evaluate(model, [], torch.device("cpu")))

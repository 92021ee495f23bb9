"""A library's evaluation entry that starts a process group only when none exists yet:
the group is normally started by the training job that calls it, after that job chose
each process's GPU, so the `.cuda()` here is only unproven (`--preview`)."""
import torch
import torch.distributed as dist


def ensure_group():
    if not dist.is_initialized():
        dist.init_process_group("nccl")


@torch.no_grad()
def evaluate(model, loader):
    ensure_group()
    model = model.cuda()  # expect-preview: DDP020
    model.eval()
    hits = torch.zeros(2, device=torch.cuda.current_device())
    for images, labels in loader:
        preds = model(images.cuda(non_blocking=True)).argmax(dim=1)  # expect-preview: DDP020
        hits[0] += (preds == labels.cuda(non_blocking=True)).sum()  # expect-preview: DDP020
        hits[1] += labels.numel()
    dist.all_reduce(hits)
    return (hits[0] / hits[1]).item()

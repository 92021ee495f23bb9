"""Sampler options built once and handed to the evaluation sampler with `**params`: the
branch the job takes sets `drop_last=True`, so whether the sampler pads is not written at
its call. Not reported: nothing in sight says it pads."""

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler


def evaluate(model, val_set, legacy_runtime=False):
    world_size, rank = dist.get_world_size(), dist.get_rank()
    if legacy_runtime:
        params = dict(num_replicas=world_size, rank=rank, shuffle=False)
    else:
        params = dict(num_replicas=world_size, rank=rank, shuffle=False, drop_last=True)
    val_sampler = DistributedSampler(val_set, **params)
    val_loader = DataLoader(val_set, batch_size=64, sampler=val_sampler)
    correct = torch.zeros(1, device="cuda")
    total = torch.zeros(1, device="cuda")
    with torch.no_grad():
        for images, labels in val_loader:
            correct += (model(images.cuda()).argmax(1) == labels.cuda()).sum()
            total += labels.numel()
    dist.all_reduce(correct)
    dist.all_reduce(total)
    return (correct / total).item()

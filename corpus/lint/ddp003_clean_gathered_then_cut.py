"""Distributed inference over a test set: predictions are gathered from every rank and cut
back to the dataset's length before the accuracy is computed, which removes the samples
the sampler repeated to pad the last ranks."""
import os

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler


@torch.no_grad()
def accuracy(model, test_set, batch_size=256):
    local_rank = int(os.environ["LOCAL_RANK"])
    sampler = DistributedSampler(test_set, shuffle=False)
    loader = DataLoader(test_set, batch_size=batch_size, sampler=sampler)
    predictions, labels = [], []
    for images, targets in loader:
        predictions.append(model(images.cuda(local_rank)).argmax(1))
        labels.append(targets.cuda(local_rank))
    local = torch.stack([torch.cat(predictions), torch.cat(labels)])
    gathered = [torch.empty_like(local) for _ in range(dist.get_world_size())]
    dist.all_gather(gathered, local)
    # DistributedSampler deals index i to rank i % world_size: interleave back to order.
    ordered = torch.stack(gathered, dim=2).reshape(2, -1)[:, : len(test_set)]
    return (ordered[0] == ordered[1]).float().mean().item()

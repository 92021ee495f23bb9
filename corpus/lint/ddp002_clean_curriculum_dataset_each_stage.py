"""Curriculum training: every stage builds a new, harder dataset and a sampler over it and
makes one pass; no two passes read the same data."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def stage_dataset(level, size=4000):
    noise = 0.1 * (level + 1)
    x = torch.randn(size, 20)
    return TensorDataset(x + noise * torch.randn_like(x), (x.sum(1) > 0).long())


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = DDP(nn.Linear(20, 2).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for level in range(6):
        stage = stage_dataset(level)
        sampler = DistributedSampler(stage, drop_last=True)
        loader = DataLoader(stage, batch_size=50, sampler=sampler)
        for x, y in loader:
            x, y = x.cuda(local_rank), y.cuda(local_rank)
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

"""Migrated to torchrun: the device comes from LOCAL_RANK in a project helper; the old
--local_rank argument is still declared but nothing reads it any more."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

from utils.dist import init_distributed_device


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=3)
    return parser.parse_args()


def main():
    args = parse_args()
    device = init_distributed_device()
    data = TensorDataset(torch.randn(1024, 10), torch.randint(0, 2, (1024,)))
    model = DDP(nn.Linear(10, 2).to(device), device_ids=[device.index])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=32, sampler=sampler)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.to(device)), y.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

"""Accumulation through a helper context manager that enters no_sync() when not syncing."""
import contextlib
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def maybe_skip_sync(model, sync):
    return contextlib.nullcontext() if sync else model.no_sync()


def train_one_epoch(model, loader, optimizer, accum, device):
    for step, (x, y) in enumerate(loader):
        x, y = x.to(device), y.to(device)
        boundary = (step + 1) % accum == 0
        with maybe_skip_sync(model, boundary):
            loss = nn.functional.mse_loss(model(x), y) / accum
            loss.backward()
        if (step + 1) % accum == 0:
            optimizer.step()
            optimizer.zero_grad()


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)
    data = TensorDataset(torch.randn(2048, 8), torch.randn(2048, 1))
    model = DDP(nn.Linear(8, 1).to(device), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=16, sampler=sampler)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        train_one_epoch(model, loader, optimizer, 8, device)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

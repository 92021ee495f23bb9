"""Regression trainer: a rank whose loss diverges votes to stop, and the vote is dropped."""

import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler

from sensors import SensorWindows


class Forecaster(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(16, 64, batch_first=True)
        self.head = nn.Linear(64, 1)

    def forward(self, x):
        out, _ = self.gru(x)
        return self.head(out[:, -1]).squeeze(-1)


def any_rank(flag):
    vote = torch.tensor([int(flag)], device=torch.device("cuda", torch.cuda.current_device()))
    dist.all_reduce(vote)
    return vote.item() > 0


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)
    model = DDP(Forecaster().to(device), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    windows = SensorWindows("windows.npz")
    sampler = DistributedSampler(windows, shuffle=True, drop_last=True)
    loader = DataLoader(windows, batch_size=64, sampler=sampler)
    for epoch in range(200):
        sampler.set_epoch(epoch)
        last = 0.0
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            loss = nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            last = loss.item()
        diverged = last > 1e3
        any_rank(diverged)  # expect: DDP048
        if diverged:
            print(f"rank {dist.get_rank()}: loss diverged at epoch {epoch}")
            break
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

"""A regression job split into join/leave helpers; each spawned process fits its replica
on its own GPU."""
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def join_group(rank, world_size, port=29733):
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(port))
    dist.init_process_group('gloo', rank=rank, world_size=world_size)  # expect: DDP032


def leave_group():
    dist.destroy_process_group()


class Regressor(nn.Module):
    def __init__(self, features=24):
        super().__init__()
        self.hidden = nn.Linear(features, 48)
        self.head = nn.Linear(48, 1)

    def forward(self, x):
        return self.head(torch.tanh(self.hidden(x)))


def fit(rank, world_size, iterations=500):
    join_group(rank, world_size)
    torch.cuda.set_device(rank)
    regressor = DDP(Regressor().cuda(rank))
    optimizer = torch.optim.Adam(regressor.parameters(), lr=2e-3)
    for _ in range(iterations):
        x = torch.randn(64, 24, device=f"cuda:{rank}")
        target = x[:, :1] * 3.0
        optimizer.zero_grad()
        nn.functional.mse_loss(regressor(x), target).backward()
        optimizer.step()
    leave_group()


if __name__ == "__main__":
    gpus = torch.cuda.device_count()
    mp.spawn(fit, args=(gpus,), nprocs=gpus, join=True)

"""Rank 0 runs one more training forward through the DDP wrapper after rank 1 has finished:
DDP's buffer broadcast (C++, not recorded by the guard) waits for rank 1 forever."""

import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(0)
net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.BatchNorm1d(8), torch.nn.Linear(8, 1))
model = DDP(net)
opt = torch.optim.SGD(model.parameters(), lr=0.1)


def train_step(x: torch.Tensor) -> None:
    loss = model(x).pow(2).mean()  # line:forward
    opt.zero_grad()
    loss.backward()
    opt.step()


for _ in range(3):
    train_step(torch.randn(8, 4))
print(f"FAULT {time.time()}", flush=True)
if rank == 0:
    train_step(torch.randn(8, 4))  # line:extra

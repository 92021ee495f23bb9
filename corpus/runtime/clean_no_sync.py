"""Gradient accumulation with no_sync: only every fourth backward all-reduces."""

import contextlib

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo")
torch.manual_seed(0)
model = DDP(torch.nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(16):
    last = step % 4 == 3
    with contextlib.nullcontext() if last else model.no_sync():
        model(torch.randn(4, 8)).mean().backward()
    if last:
        opt.step()
        opt.zero_grad()
dist.destroy_process_group()

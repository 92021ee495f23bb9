"""Rank 1 nudges one parameter after the step: the replicas silently drift apart."""

import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(0)
model = DDP(torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1)))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(40):
    model(torch.randn(4, 8)).mean().backward()
    if rank == 1 and step == 5:
        with torch.no_grad():
            model.module[2].bias.add_(1e-3)
            print(f"FAULT {time.time()}", flush=True)
    opt.step()
    opt.zero_grad()
    time.sleep(0.05)
dist.destroy_process_group()

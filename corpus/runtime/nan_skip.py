"""Rank 1 skips backward on a NaN loss (rank-local `continue`): DDP's bucket all-reduces desync."""

import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(0)
model = DDP(torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1)))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(10):
    loss = model(torch.randn(4, 8)).mean()
    if rank == 1 and step == 3:
        loss = loss * float("nan")
        print(f"FAULT {time.time()}", flush=True)
    if torch.isnan(loss):
        continue
    opt.zero_grad()
    loss.backward()  # line:backward
    opt.step()
dist.destroy_process_group()

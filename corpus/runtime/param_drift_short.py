"""A 60-step run under the default check interval (100): rank 1 nudges a weight at step 30.
The check at the end of the run still catches it."""

import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(0)
model = DDP(torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1)))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(60):
    model(torch.randn(4, 8)).mean().backward()
    opt.step()
    opt.zero_grad()
    if rank == 1 and step == 30:
        with torch.no_grad():
            model.module[0].weight[0, 0] += 1e-3
        print(f"FAULT {time.time()}", flush=True)
dist.destroy_process_group()

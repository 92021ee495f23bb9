"""Rank 1 catches an out-of-memory error and skips the step (simulated on CPU)."""

import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(0)
model = DDP(torch.nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(10):
    try:
        loss = model(torch.randn(4, 8)).mean()
        if rank == 1 and step == 2:
            print(f"FAULT {time.time()}", flush=True)
            raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
        opt.zero_grad()
        loss.backward()  # line:backward
        opt.step()
    except torch.cuda.OutOfMemoryError:
        continue
dist.destroy_process_group()

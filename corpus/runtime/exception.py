"""Rank 1 raises an uncaught error while rank 0 waits in an all-reduce."""

import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
dist.all_reduce(torch.ones(1))
print(f"FAULT {time.time()}", flush=True)
if rank == 1:
    raise ValueError("bad batch 17")  # line:raise
dist.all_reduce(torch.ones(1))  # line:second

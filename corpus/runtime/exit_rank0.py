"""Rank 0 calls sys.exit(3) while the other ranks wait in an all-reduce."""

import sys
import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
dist.all_reduce(torch.ones(1))
if rank == 0:
    print(f"FAULT {time.time()}", flush=True)
    sys.exit(3)  # line:exit
dist.all_reduce(torch.ones(1))  # line:second

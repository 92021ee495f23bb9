"""Rank 1 calls sys.exit(3) in the middle of training while rank 0 waits."""

import sys
import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
dist.all_reduce(torch.ones(1))  # line:first
if rank == 1:
    print(f"FAULT {time.time()}", flush=True)
    sys.exit(3)  # line:exit
dist.all_reduce(torch.ones(1))  # line:second

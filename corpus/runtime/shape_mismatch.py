"""The ranks all-reduce tensors of different lengths (a rank-dependent size)."""

import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
print(f"FAULT {time.time()}", flush=True)
x = torch.ones(8 + rank)
dist.all_reduce(x)  # line:reduce
dist.destroy_process_group()

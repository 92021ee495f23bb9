"""Rank 1 broadcasts where rank 0 all-reduces: different collectives at the same position."""

import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
t = torch.ones(16)
dist.all_reduce(t)
print(f"FAULT {time.time()}", flush=True)
if rank == 0:
    dist.all_reduce(t)  # line:reduce
else:
    dist.broadcast(t, src=0)  # line:broadcast
dist.destroy_process_group()

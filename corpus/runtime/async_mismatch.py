"""Async collectives: rank 1 all-gathers where rank 0 all-reduces, then both wait."""

import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
world = dist.get_world_size()
t = torch.ones(4)
print(f"FAULT {time.time()}", flush=True)
if rank == 0:
    work = dist.all_reduce(t, async_op=True)  # line:reduce
else:
    work = dist.all_gather([torch.empty(4) for _ in range(world)], t, async_op=True)  # line:gather
work.wait()

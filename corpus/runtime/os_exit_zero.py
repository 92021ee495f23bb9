"""Every collective matches; then rank 1 leaves with os._exit(0) (as some launch scripts do)
while rank 0 finishes normally a moment later. A clean run: exit status 0, no report."""

import os
import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
for _ in range(3):
    dist.all_reduce(torch.ones(4))
dist.barrier()
print(f"rank {rank} done", flush=True)
if rank == 1:
    os._exit(0)
time.sleep(1.5)  # rank 1 is gone by now: its monitor must not call that a vanished rank

"""The last rank runs out of memory (simulated on CPU) and does not catch it; the others wait in
an all-reduce."""

import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
dist.all_reduce(torch.ones(1))
if rank == world - 1:
    print(f"FAULT {time.time()}", flush=True)
    raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")  # line:oom
dist.all_reduce(torch.ones(1))  # line:second

"""A barrier only rank 0 reaches while rank 1 stays busy (a slow filesystem): a hang."""

import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
dist.all_reduce(torch.ones(1))  # line:reduce
print(f"FAULT {time.time()}", flush=True)
if rank == 0:
    dist.barrier()  # line:barrier
else:
    while True:
        time.sleep(0.1)  # line:sleep
dist.destroy_process_group()

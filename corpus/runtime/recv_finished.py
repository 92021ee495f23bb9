"""Rank 0 waits in a point-to-point recv that rank 1 never sends: rank 1 finishes its script.
The guard does not record recv; without the guard gloo ends this when rank 1's sockets close."""

import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
dist.all_reduce(torch.ones(1))  # line:reduce
print(f"FAULT {time.time()}", flush=True)
if rank == 0:
    buffer = torch.zeros(4)
    dist.recv(buffer, src=1)  # line:recv

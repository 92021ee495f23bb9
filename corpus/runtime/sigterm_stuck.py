"""Rank 1 sends SIGTERM to rank 0 while rank 0 is blocked in a barrier (inside gloo, C++):
rank 0 must end within about a second, as it does without the guard."""

import os
import signal
import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
pids = [torch.zeros(1, dtype=torch.int64) for _ in range(2)]
dist.all_gather(pids, torch.tensor([os.getpid()]))
if rank == 0:
    dist.barrier()  # line:barrier
else:
    time.sleep(1.0)
    print(f"FAULT {time.time()}", flush=True)
    os.kill(int(pids[0]), signal.SIGTERM)
    while True:
        time.sleep(0.05)

"""A bare ``import guards`` at the top: the guard installs itself under torchrun (run here with
and without ``-m guards``: once either way) and does nothing in a plain ``python`` process."""

import guards  # noqa: F401  (installs itself when torchrun started this process)

import os
import time

import torch
import torch.distributed as dist
from guards.agent.runtime import RUNTIME

print(f"guard installed: {RUNTIME.installed}", flush=True)
if "RANK" in os.environ:
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    dist.all_reduce(torch.ones(4))
    print(f"FAULT {time.time()}", flush=True)
    if rank == 0:
        dist.all_reduce(torch.ones(4))  # line:reduce
    else:
        dist.broadcast(torch.ones(4), src=0)  # line:broadcast

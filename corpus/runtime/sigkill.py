"""Rank 1 is killed (as by the OOM killer) while rank 0 waits in an all-reduce."""

import os
import signal
import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
dist.all_reduce(torch.ones(1))  # line:first
if rank == 1:
    time.sleep(0.5)
    print(f"FAULT {time.time()}", flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
dist.all_reduce(torch.ones(1))  # line:second

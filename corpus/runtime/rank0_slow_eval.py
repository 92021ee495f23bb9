"""Rank 0 evaluates alone for 20 s while rank 1 waits in a barrier: slow, not wrong. With
GUARDS_HANG_WARN=10 the guard warns with rank 0's stack, and the job finishes (exit 0)."""

import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
dist.all_reduce(torch.ones(1))


def evaluate(seconds: float) -> float:
    end = time.time() + seconds
    total = 0.0
    while time.time() < end:
        total += float(torch.ones(64).sum())
        time.sleep(0.05)  # line:work
    return total


print(f"FAULT {time.time()}", flush=True)
if rank == 0:
    evaluate(20.0)  # line:evaluate
dist.barrier()  # line:barrier
print(f"rank {rank} finished", flush=True)

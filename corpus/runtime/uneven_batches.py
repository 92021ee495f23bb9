"""Rank-local sharding gives rank 1 fewer batches: it finishes while rank 0 waits."""

import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
print(f"FAULT {time.time()}", flush=True)
data = list(range(10 - 3 * rank))
for _ in range(0, len(data), 2):
    grad = torch.ones(4)
    dist.all_reduce(grad)  # line:reduce

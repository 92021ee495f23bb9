"""On a subgroup of ranks 0 and 1, the two ranks use different reduce ops."""

import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
pair = dist.new_group([0, 1])
dist.all_reduce(torch.ones(1))
print(f"FAULT {time.time()}", flush=True)
if rank in (0, 1):
    op = dist.ReduceOp.SUM if rank == 0 else dist.ReduceOp.MAX
    dist.all_reduce(torch.ones(4), op=op, group=pair)  # line:pair
dist.barrier()

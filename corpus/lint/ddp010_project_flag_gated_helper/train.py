"""Rank 0 evaluates alone. The helper it calls broadcasts only when `args.sharded_eval` is
on, and this script never turns it on with a rank-0-only evaluation (a flag, not a rank:
no rank-local collective is known here). The count helper, however, always all-reduces:
called on rank 0 only it hangs."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

from retrieval import embed_queries, sync_counts


def evaluate(model, args):
    if dist.get_rank() != 0:
        return None
    vectors = embed_queries(model.module, torch.randn(32, 16), args.sharded_eval)
    hits = int((vectors.argmax(dim=1) == 0).sum())
    return sync_counts(hits)  # expect: DDP010


def main(args, steps=100):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = DDP(nn.Linear(16, 8).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(steps):
        optimizer.zero_grad()
        model(torch.randn(32, 16, device=local_rank)).sum().backward()
        optimizer.step()
    print(evaluate(model, args))
    dist.destroy_process_group()

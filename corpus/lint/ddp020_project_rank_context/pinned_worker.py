"""Constructing `PinnedGroup` sets the worker's device, so `.cuda()` after it is the
worker's own GPU."""

import torch
import torch.distributed as dist

from harness import PinnedGroup


def worker(rank, world_size):
    PinnedGroup(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    total = torch.ones(4).cuda()
    dist.all_reduce(total)

"""`GroupScope` joins the process group but sets no device: every worker's "cuda" is
GPU 0."""

import torch
import torch.distributed as dist

from harness import GroupScope


def worker(rank, world_size):
    with GroupScope(rank, world_size):
        total = torch.ones(4, device=torch.device("cuda"))  # expect: DDP020
        dist.all_reduce(total)


def bootstrap(rank, world_size):
    dist.init_process_group("nccl", rank=rank, world_size=world_size)

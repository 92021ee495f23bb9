"""Each spawned worker runs inside `RankScope`, whose `__enter__` sets its device: the
bare "cuda" in the body is the worker's own GPU."""

import torch
import torch.distributed as dist

from harness import RankScope


def worker(rank, world_size):
    with RankScope(rank):
        dist.init_process_group("nccl", rank=rank, world_size=world_size)
        total = torch.ones(4, device=torch.device("cuda"))
        dist.all_reduce(total)
        dist.destroy_process_group()

"""Rank helpers of a single-node project: `get_local_rank` is named for the node, but it
returns the rank in the process group, which is what a sampler needs."""

import torch.distributed as dist


def get_local_rank():
    if not dist.is_initialized():
        return 0
    return dist.get_rank()


def get_world_size():
    return dist.get_world_size() if dist.is_initialized() else 1

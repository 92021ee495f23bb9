"""The job's shape, kept in module globals that `setup` fills in (other modules read
`comm.size` after calling it)."""

import os

import torch.distributed as dist

size = -1
rank = -1
local_rank = -1


def setup(backend="nccl"):
    global size, rank, local_rank
    if int(os.environ.get("WORLD_SIZE", "1")) > 1:
        dist.init_process_group(backend)
        size = dist.get_world_size()
        rank = dist.get_rank()
        local_rank = int(os.environ["LOCAL_RANK"])
    else:
        size = 1
        rank = 0
        local_rank = 0

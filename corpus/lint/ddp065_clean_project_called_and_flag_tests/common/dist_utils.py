"""Process-group helpers: the tests here call what they test."""
import os

import torch
import torch.distributed as dist


def setup():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    return local_rank


def is_main_process():
    return not dist.is_initialized() or dist.get_rank() == 0


def world_size():
    if dist.is_available() and dist.is_initialized():
        return dist.get_world_size()
    return 1

"""Distributed helpers shared by the training scripts."""
import os
from contextlib import contextmanager

import torch
import torch.distributed as dist


def setup():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    return local_rank


def is_main_process():
    return not dist.is_initialized() or dist.get_rank() == 0


@contextmanager
def main_process_first(local_rank):
    """Rank 0 runs the body first (downloads, preprocessing); the others wait, then run it."""
    if local_rank != 0:
        dist.barrier(device_ids=[local_rank])
    yield
    if local_rank == 0:
        dist.barrier(device_ids=[local_rank])


def save_checkpoint(state, path):
    if is_main_process():
        tmp = f"{path}.tmp"
        torch.save(state, tmp)
        os.replace(tmp, path)

"""Process-group helpers that also work in a single-process run."""
import torch.distributed as dist


def is_dist_initialized():
    return dist.is_available() and dist.is_initialized()


def get_rank():
    return dist.get_rank() if is_dist_initialized() else 0


def is_main_process():
    return get_rank() == 0

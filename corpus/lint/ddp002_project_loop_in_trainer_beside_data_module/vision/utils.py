"""Helpers shared by the scripts."""
import torch.distributed as dist


def distributed_is_initialized():
    return dist.is_available() and dist.is_initialized()

"""Helpers around the process group."""
import torch
import torch.distributed as dist


def is_main_process():
    return not dist.is_initialized() or dist.get_rank() == 0


def average_across(value, device):
    """The mean of `value` over the processes."""
    total = torch.tensor([value], device=device)
    dist.all_reduce(total)
    return total.item() / dist.get_world_size()

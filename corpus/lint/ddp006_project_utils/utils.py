"""Distributed helpers, in the style of the torchvision references."""
import os

import torch
import torch.distributed as dist


def is_main_process():
    return not dist.is_initialized() or dist.get_rank() == 0


def save_on_master(obj, path):
    if is_main_process():
        tmp = f"{path}.tmp"
        torch.save(obj, tmp)
        os.replace(tmp, path)

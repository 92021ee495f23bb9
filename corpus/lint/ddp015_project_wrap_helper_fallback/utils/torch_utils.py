"""Model helpers shared by the training scripts."""
import os

import torch
from torch.nn.parallel import DistributedDataParallel

LOCAL_RANK = int(os.getenv("LOCAL_RANK", -1))


def smart_ddp(model):
    """Wrap for multi-process training, with the options this project wants."""
    return DistributedDataParallel(model, device_ids=[LOCAL_RANK], output_device=LOCAL_RANK)


def select_device(local_rank):
    if local_rank != -1:
        torch.cuda.set_device(local_rank)
        return torch.device("cuda", local_rank)
    return torch.device("cuda:0" if torch.cuda.is_available() else "cpu")

"""Helpers shared by the training scripts: each rank gets its own seed."""
import random

import numpy as np
import torch
import torch.distributed as dist


def set_seed(seed):
    seed = seed + dist.get_rank()
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)

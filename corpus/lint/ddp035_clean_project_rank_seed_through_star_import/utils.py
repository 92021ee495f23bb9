"""Helpers the trainer takes with a star import (os comes with them)."""
import os
import random

import numpy as np
import torch


def init_seeds(seed=0):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def save_code(path, log_dir):
    os.makedirs(log_dir, exist_ok=True)
    with open(path) as src, open(os.path.join(log_dir, os.path.basename(path)), "w") as dst:
        dst.write(src.read())

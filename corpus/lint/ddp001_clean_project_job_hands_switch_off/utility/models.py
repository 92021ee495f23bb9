"""Builds the track-finding network; wraps it in DDP when the caller asks for it."""
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel


def build_model(device, distributed=False, rank=0):
    model = nn.Sequential(nn.Linear(6, 64), nn.ReLU(), nn.Linear(64, 2)).to(device)
    if distributed:
        return DistributedDataParallel(model, device_ids=[rank])
    return model

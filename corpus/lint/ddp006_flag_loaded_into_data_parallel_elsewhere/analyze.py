"""Restores the trained model for analysis into `nn.DataParallel`, which expects the
`module.` prefix the DDP-trained file carries."""
import torch
from torch import nn


def restore(path):
    model = nn.DataParallel(nn.Conv2d(4, 1, 3, padding=1))
    model.load_state_dict(torch.load(path, map_location="cpu"))
    return model.eval()

"""Fine-tune from any baseline's pretrained weights, on one GPU."""
import sys

import torch
import torch.nn as nn


def load_encoder(path):
    encoder = nn.Sequential(nn.Linear(128, 256), nn.ReLU(), nn.Linear(256, 128))
    state = torch.load(path, map_location="cpu")
    state = {k[len("module."):] if k.startswith("module.") else k: v for k, v in state.items()}
    encoder.load_state_dict(state)
    return encoder


if __name__ == "__main__":
    head = nn.Sequential(load_encoder(sys.argv[1]), nn.Linear(128, 10))
    print(sum(p.numel() for p in head.parameters()))

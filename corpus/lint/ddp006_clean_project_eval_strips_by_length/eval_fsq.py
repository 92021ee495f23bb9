"""Reconstruction error of a trained checkpoint on one GPU."""
import sys
from collections import OrderedDict

import torch
import torch.nn as nn


def load(path):
    model = nn.Sequential(nn.Conv2d(3, 8, 4, stride=4), nn.Tanh(), nn.ConvTranspose2d(8, 3, 4, stride=4))
    state_dict = torch.load(path, map_location="cpu")
    # the trainer saved the DDP wrapper: drop the `module.` in front of every key
    cleaned = OrderedDict()
    for k, v in state_dict.items():
        cleaned[k[7:]] = v
    model.load_state_dict(cleaned)
    return model.eval()


if __name__ == "__main__":
    model = load(sys.argv[1])
    images = torch.load("val_images.pt")
    with torch.no_grad():
        print(f"reconstruction MSE: {(model(images) - images).pow(2).mean().item():.5f}")

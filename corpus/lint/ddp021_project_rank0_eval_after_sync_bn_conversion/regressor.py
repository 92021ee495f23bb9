"""The regressor the training script builds: a BatchNorm layer, so it holds buffers."""
import torch.nn as nn


class Regressor(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(16, width), nn.BatchNorm1d(width), nn.ReLU())
        self.head = nn.Linear(width, 1)

    def forward(self, x):
        return self.head(self.body(x))

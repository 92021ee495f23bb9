"""The segmentation network the trainer trains and the inference tool rebuilds."""

import torch.nn as nn


class SegNet(nn.Module):
    def __init__(self, classes):
        super().__init__()
        self.encoder = nn.Conv2d(3, 64, 3, padding=1)
        self.head = nn.Conv2d(64, classes, 1)

    def forward(self, x):
        return self.head(self.encoder(x).relu())

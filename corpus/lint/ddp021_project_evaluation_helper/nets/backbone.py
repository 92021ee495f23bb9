"""A small residual backbone; its stages are built by a method of the class."""
import torch.nn as nn


class Backbone(nn.Module):
    def __init__(self, widths=(32, 64, 128)):
        super().__init__()
        self.stem = nn.Conv2d(3, widths[0], 3, padding=1)
        self.stages = nn.ModuleList(
            self._stage(a, b) for a, b in zip(widths, widths[1:])
        )
        self.out_channels = widths[-1]

    def _stage(self, cin, cout):
        return nn.Sequential(
            nn.Conv2d(cin, cout, 3, stride=2, padding=1), nn.BatchNorm2d(cout), nn.ReLU()
        )

    def forward(self, x):
        x = self.stem(x)
        for stage in self.stages:
            x = stage(x)
        return x

"""An image-to-image generator whose normalisation keeps no running statistics: batch
statistics at train and eval time alike, and no buffer for DDP to broadcast."""
import torch
import torch.nn as nn


class Translator(nn.Module):
    def __init__(self, channels=3, width=32):
        super().__init__()
        self.encode = nn.Sequential(
            nn.Conv2d(channels, width, 4, 2, 1),
            nn.BatchNorm2d(width, track_running_stats=False),
            nn.LeakyReLU(0.2),
        )
        self.decode = nn.Sequential(
            nn.ConvTranspose2d(width, channels, 4, 2, 1),
            nn.Tanh(),
        )

    def forward(self, x):
        return self.decode(self.encode(x))


class Critic(nn.Module):
    def __init__(self, channels=6, width=32):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(channels, width, 4, 2, 1),
            nn.BatchNorm2d(width, 1e-5, 0.1, True, False),
            nn.LeakyReLU(0.2),
            nn.Conv2d(width, 1, 4, 1, 1),
        )

    def forward(self, source, target):
        return self.body(torch.cat([source, target], dim=1))

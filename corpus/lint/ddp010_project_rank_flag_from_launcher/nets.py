"""A small convolutional network and the CIFAR-10 loaders it trains on."""

import torch.nn as nn
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from torchvision import datasets, transforms


class SmallNet(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 32, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 3, padding=1),
            nn.ReLU(),
            nn.AdaptiveAvgPool2d(1),
        )
        self.head = nn.Linear(64, classes)

    def forward(self, x):
        return self.head(self.features(x).flatten(1))


def make_loaders(args):
    data = datasets.CIFAR10("data", train=True, transform=transforms.ToTensor())
    sampler = DistributedSampler(data) if args.ddp else None
    loader = DataLoader(
        data, batch_size=128, shuffle=sampler is None, sampler=sampler, num_workers=4
    )
    return {"train": loader}

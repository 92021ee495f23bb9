"""One small network under the name the script asks for by default."""

from torch import nn


def resnet18(pretrained=False, num_classes=1000):
    return nn.Sequential(
        nn.Conv2d(3, 8, 7, stride=4, padding=3, bias=False),
        nn.BatchNorm2d(8),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(8, num_classes),
    )

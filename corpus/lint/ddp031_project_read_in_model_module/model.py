"""Model builder: a small CNN whose BatchNorm layers are synchronised on request."""
import torch.nn as nn


def build_model(args):
    net = nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1),
        nn.BatchNorm2d(16),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(16, 10),
    )
    if args.sync_bn:
        net = nn.SyncBatchNorm.convert_sync_batchnorm(net)
    return net

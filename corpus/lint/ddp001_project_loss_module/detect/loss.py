"""A detection loss with no distributed import of its own: `train.py`, which runs on every
rank, builds and calls it, so its hard-coded GPU 0 puts every rank's empty targets there."""

import torch
import torch.nn as nn


def bare(model):
    wrappers = (nn.DataParallel, nn.parallel.DistributedDataParallel)
    return model.module if isinstance(model, wrappers) else model


class BoxLoss:
    def __init__(self, model):
        self.classes = bare(model).classes

    def __call__(self, predictions, targets):
        if targets.numel() == 0:
            targets = torch.zeros((0, 6), device="cuda:0")  # expect: DDP001
        return (predictions.sum() - targets.sum()) / self.classes

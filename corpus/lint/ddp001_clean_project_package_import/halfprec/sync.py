"""Averaging gradients across processes."""

import torch.distributed as dist


def average_gradients(model):
    world = dist.get_world_size()
    for param in model.parameters():
        if param.grad is not None:
            dist.all_reduce(param.grad)
            param.grad /= world

"""Wrappers kept from the single-machine days. `DataParallel` is imported by the trainer
but never called (it wraps in DDP): whether a user calls it is out of sight."""
import torch
import torch.nn as nn


def DataParallel(module, device_ids=None, chunk_sizes=None):
    if chunk_sizes is None or len(set(chunk_sizes)) == 1:
        return nn.DataParallel(module, device_ids)  # expect-preview: DDP015
    raise ValueError("uneven chunk sizes are not supported: %s" % (chunk_sizes,))


def count_parameters(module):
    return sum(p.numel() for p in module.parameters() if p.requires_grad) if isinstance(module, torch.nn.DataParallel) else 0

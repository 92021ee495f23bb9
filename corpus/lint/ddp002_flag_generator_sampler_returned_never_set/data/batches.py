"""Endless batch streams for step-based training: the sampler comes back with the stream so
that the trainer can move its epoch."""

import os

from torch.utils.data import DataLoader, DistributedSampler


def _endless(loader):
    while True:  # expect: DDP002
        yield from loader


def make_stream(dataset, batch_size, workers=4):
    if int(os.environ.get("WORLD_SIZE", 1)) > 1:
        sampler = DistributedSampler(dataset)
    else:
        sampler = None
    loader = DataLoader(
        dataset,
        batch_size=batch_size,
        shuffle=sampler is None,
        sampler=sampler,
        num_workers=workers,
        drop_last=True,
    )
    return _endless(loader), sampler

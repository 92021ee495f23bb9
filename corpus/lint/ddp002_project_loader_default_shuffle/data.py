"""Data module of a polyp-segmentation project: one helper builds every loader; it
shuffles unless told otherwise, and shards with a DistributedSampler under DDP."""
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler


def get_loader(dataset, batch_size, shuffle=True, num_workers=4):
    sampler = None
    if dist.is_available() and dist.is_initialized():
        sampler = DistributedSampler(dataset, shuffle=shuffle)  # expect: DDP002
    return DataLoader(
        dataset,
        batch_size=batch_size,
        shuffle=shuffle and sampler is None,
        sampler=sampler,
        num_workers=num_workers,
        pin_memory=True,
    )

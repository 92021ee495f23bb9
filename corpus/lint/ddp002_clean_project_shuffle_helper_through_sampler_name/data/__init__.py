"""Loader construction and the per-epoch shuffle hook of an image-harmonisation project."""
import torch
from torch.utils.data import DataLoader, DistributedSampler, RandomSampler


def build_loader(dataset, batch_size, workers=4):
    sampler = DistributedSampler(dataset) if torch.distributed.is_initialized() else RandomSampler(dataset)
    return DataLoader(dataset, batch_size=batch_size, sampler=sampler, num_workers=workers, drop_last=True)


def shuffle_loader(loader, epoch):
    """Gives a DistributedSampler the epoch, so that each epoch draws a new order."""
    sampler = loader.sampler
    if isinstance(sampler, DistributedSampler):
        sampler.set_epoch(epoch)

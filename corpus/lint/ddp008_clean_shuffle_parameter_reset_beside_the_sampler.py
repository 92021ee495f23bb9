"""A motion-generation loader builder in the style of the OpenMMLab toolboxes: in the
distributed branch the sampler takes over the shuffling and the flag is turned off before
the DataLoader sees it, so `shuffle=shuffle` is never True beside a sampler."""

import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler


def build_dataloader(dataset, samples_per_gpu, workers_per_gpu, num_gpus=1, shuffle=True):
    distributed = dist.is_available() and dist.is_initialized()
    if distributed:
        sampler = DistributedSampler(dataset, shuffle=shuffle)
        shuffle = False
        batch_size = samples_per_gpu
        num_workers = workers_per_gpu
    else:
        sampler = None
        batch_size = num_gpus * samples_per_gpu
        num_workers = num_gpus * workers_per_gpu
    return DataLoader(
        dataset,
        batch_size=batch_size,
        sampler=sampler,
        shuffle=shuffle,
        num_workers=num_workers,
        pin_memory=True,
    )


def train_loader(motions):
    return build_dataloader(motions, samples_per_gpu=64, workers_per_gpu=4)

"""Volumes for a segmentation autoencoder: each rank reads its own part of the training and
validation sets through a DistributedSampler when the job has more than one process."""
import torch
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def build_loaders(root, batch_size, rank=0, world_size=1):
    volumes = torch.load(f"{root}/volumes.pt")
    train_set = TensorDataset(volumes["train"])
    val_set = TensorDataset(volumes["val"])
    distributed = world_size > 1
    if distributed:
        train_sampler = DistributedSampler(train_set, num_replicas=world_size, rank=rank)
        val_sampler = DistributedSampler(val_set, num_replicas=world_size, rank=rank)
    else:
        train_sampler = None
        val_sampler = None
    train_loader = DataLoader(
        train_set, batch_size=batch_size, shuffle=not distributed, sampler=train_sampler
    )
    val_loader = DataLoader(val_set, batch_size=batch_size, shuffle=False, sampler=val_sampler)
    return train_loader, val_loader

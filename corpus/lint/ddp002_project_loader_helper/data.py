"""Loaders for the training script: one for training, one for evaluation."""
from torch.utils.data import DataLoader, DistributedSampler


def build_loaders(train_set, val_set, batch_size):
    train_sampler = DistributedSampler(train_set, shuffle=True, drop_last=True)
    val_sampler = DistributedSampler(val_set, shuffle=False)
    train_loader = DataLoader(train_set, batch_size=batch_size, sampler=train_sampler, num_workers=4)
    val_loader = DataLoader(val_set, batch_size=batch_size, sampler=val_sampler, num_workers=4)
    return train_loader, val_loader

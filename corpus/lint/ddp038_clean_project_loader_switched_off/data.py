"""Loaders for pretext-task pretraining: sharded only when asked to."""

from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from volumes import PatchDataset


def build_loaders(cfg, ddp=False):
    train_set = PatchDataset(cfg.root, split="train")
    val_set = PatchDataset(cfg.root, split="val")
    if ddp:
        train_sampler = DistributedSampler(train_set, shuffle=True)  # expect-preview: DDP002
        val_sampler = DistributedSampler(val_set)
        train_loader = DataLoader(train_set, batch_size=cfg.batch, sampler=train_sampler)
        val_loader = DataLoader(val_set, batch_size=cfg.batch, sampler=val_sampler)
    else:
        train_loader = DataLoader(train_set, batch_size=cfg.batch, shuffle=True)
        val_loader = DataLoader(val_set, batch_size=cfg.batch)
    return train_loader, val_loader

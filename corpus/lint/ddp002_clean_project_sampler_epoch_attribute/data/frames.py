"""Blurred/sharp frame pairs read from an LMDB export, and the loader around them."""
import os

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler


class FramePairs(Dataset):
    def __init__(self, root, split, crop=256):
        self.files = sorted(os.listdir(os.path.join(root, split)))
        self.root = os.path.join(root, split)
        self.crop = crop

    def __len__(self):
        return len(self.files)

    def __getitem__(self, index):
        pair = np.load(os.path.join(self.root, self.files[index]))
        top = np.random.randint(0, pair.shape[1] - self.crop)
        left = np.random.randint(0, pair.shape[2] - self.crop)
        patch = pair[:, top : top + self.crop, left : left + self.crop]
        return torch.from_numpy(patch[:3]).float(), torch.from_numpy(patch[3:]).float()


class FrameLoader:
    """Wraps the DataLoader of one split; under DDP each rank reads its own share."""

    def __init__(self, cfg, rank, split="train"):
        dataset = FramePairs(cfg.data_root, split, cfg.crop)
        if cfg.distributed:
            sampler = DistributedSampler(dataset, num_replicas=cfg.world_size, rank=rank)
            self.loader = DataLoader(
                dataset, batch_size=cfg.batch_size, sampler=sampler, num_workers=4, drop_last=True
            )
        else:
            self.loader = DataLoader(dataset, batch_size=cfg.batch_size, shuffle=True, num_workers=4)

    def start_epoch(self, epoch):
        if isinstance(self.loader.sampler, DistributedSampler):
            self.loader.sampler.epoch = epoch  # the permutation is seeded with seed + epoch

    def __iter__(self):
        return iter(self.loader)

    def __len__(self):
        return len(self.loader)

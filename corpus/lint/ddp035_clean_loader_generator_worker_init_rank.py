"""A loader generator seeded alike on every rank, but the `worker_init_fn` re-seeds every
worker from the rank and the worker index: the workers' streams differ by rank, so the
generator's shared base seed changes nothing."""
import random

import numpy as np
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, Dataset, DistributedSampler


class Spectrograms(Dataset):
    def __init__(self, clips):
        self.clips = clips

    def __len__(self):
        return len(self.clips)

    def __getitem__(self, index):
        clip = self.clips[index]
        start = np.random.randint(0, max(1, clip.shape[-1] - 400))
        return torch.from_numpy(clip[..., start : start + 400])


def make_worker_init(rank):
    def init(worker_id):
        seed = 1000 * rank + worker_id
        np.random.seed(seed)
        random.seed(seed)

    return init


def speech_loader(clips, cfg):
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    data = Spectrograms(clips)
    return DataLoader(
        data,
        batch_size=cfg.batch_size,
        sampler=DistributedSampler(data),
        num_workers=8,
        worker_init_fn=make_worker_init(rank),
        generator=torch.Generator().manual_seed(cfg.seed),
    )

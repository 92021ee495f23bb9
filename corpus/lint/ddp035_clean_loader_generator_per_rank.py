"""The reproducibility recipe done for several processes: the loader's generator is seeded
with `seed + rank`, so each rank's workers start from their own base seed while a rerun
with the same seed reproduces every rank."""
import os
import random

import numpy as np
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, Dataset, DistributedSampler


def seed_worker(worker_id):
    worker_seed = torch.initial_seed() % 2**32
    np.random.seed(worker_seed)
    random.seed(worker_seed)


class Patches(Dataset):
    def __init__(self, volumes, size=96):
        self.volumes = volumes
        self.size = size

    def __len__(self):
        return len(self.volumes)

    def __getitem__(self, index):
        volume = self.volumes[index]
        z = random.randint(0, volume.shape[0] - self.size)
        return torch.from_numpy(volume[z : z + self.size])


def loader_for(volumes, seed, batch_size=2):
    dist.init_process_group("nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    data = Patches(volumes)
    generator = torch.Generator()
    generator.manual_seed(seed + dist.get_rank())
    return DataLoader(
        data,
        batch_size=batch_size,
        sampler=DistributedSampler(data, seed=seed),
        num_workers=4,
        worker_init_fn=seed_worker,
        generator=generator,
    )

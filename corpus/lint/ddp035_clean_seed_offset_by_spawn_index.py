"""A DDPM trainer seeded per worker: `setup_seed` adds the index `mp.spawn` hands each
worker, so the ranks draw different noise and augmentations. With one GPU the script calls
the worker itself with index 0, which does not make the index the same on every rank."""
import argparse
import os
import random

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torchvision.transforms as T
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset, DistributedSampler


def setup_seed(seed, rank):
    per_rank = int(seed) + rank
    random.seed(per_rank)
    np.random.seed(per_rank)
    torch.manual_seed(per_rank)
    return per_rank


class Images(Dataset):
    def __init__(self):
        self.augment = T.Compose([T.RandomHorizontalFlip(), T.RandomCrop(32, padding=4)])

    def __len__(self):
        return 50000

    def __getitem__(self, index):
        return self.augment(torch.rand(3, 32, 32))


def main(rank, world_size, args):
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "12355")
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    torch.cuda.set_device(rank)
    setup_seed(args.seed, rank)
    data = Images()
    loader = DataLoader(data, batch_size=128, sampler=DistributedSampler(data), num_workers=4)
    net = DDP(nn.Conv2d(3, 3, 3, padding=1).cuda(), device_ids=[rank])
    optimizer = torch.optim.Adam(net.parameters(), lr=2e-4)
    for x in loader:
        x = x.cuda()
        noise = torch.randn_like(x)
        loss = (net(x + noise) - noise).square().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--gpus", default="0,1,2,3")
    args = parser.parse_args()
    world_size = len(args.gpus.split(","))
    if world_size > 1:
        mp.spawn(main, args=(world_size, args), nprocs=world_size, join=True)
    else:
        main(0, 1, args)

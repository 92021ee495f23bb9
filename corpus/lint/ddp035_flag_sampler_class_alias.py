"""FixMatch-style training: one seed on every rank, the sampler class picked by a
conditional, and random crops drawn in the DataLoader workers."""
import argparse
import os
import random

import numpy as np
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, Dataset, RandomSampler, DistributedSampler


class Patches(Dataset):
    def __init__(self, images, labels):
        self.images, self.labels = images, labels

    def __len__(self):
        return len(self.images)

    def __getitem__(self, index):
        top, left = random.randint(0, 8), random.randint(0, 8)
        return self.images[index][:, top:top + 24, left:left + 24], self.labels[index]


def set_seed(args):
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)


def main(images, labels, train_step):
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args()
    args.local_rank = int(os.environ.get("LOCAL_RANK", -1))
    if args.local_rank != -1:
        torch.cuda.set_device(args.local_rank)
        dist.init_process_group("nccl")
    set_seed(args)  # expect: DDP035
    train_set = Patches(images, labels)
    sampler_cls = RandomSampler if args.local_rank == -1 else DistributedSampler
    loader = DataLoader(train_set, sampler=sampler_cls(train_set), batch_size=64, num_workers=4, drop_last=True)
    for epoch in range(100):
        if args.local_rank != -1:
            loader.sampler.set_epoch(epoch)
        for x, y in loader:
            train_step(x, y)

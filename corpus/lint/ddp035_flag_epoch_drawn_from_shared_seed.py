"""An iteration-based trainer that restarts its loader with a sampler epoch drawn from
NumPy's generator. Every rank seeds torch and NumPy alike: the random crops repeat across
ranks (the loaders' worker seeds come from torch's generator), and the ranks agree on the
drawn epoch only because NumPy is seeded alike, so the finding advises a per-rank seed for
torch alone (a per-rank seed for both would give each rank its own permutation and
overlapping shards)."""
import argparse
import os
import random

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler
from torchvision import transforms


class Crops(Dataset):
    def __init__(self, size=5000):
        self.size = size
        self.augment = transforms.Compose(
            [transforms.RandomResizedCrop(96), transforms.RandomHorizontalFlip()]
        )

    def __len__(self):
        return self.size

    def __getitem__(self, index):
        image = torch.rand(3, 128, 128)
        return self.augment(image), index % 20


def fix_seed(seed):
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    np.random.seed(seed)
    random.seed(seed)


def train(args):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dataset = Crops()
    sampler = DistributedSampler(dataset, shuffle=True)
    loader = DataLoader(dataset, batch_size=32, sampler=sampler, num_workers=4, drop_last=True)
    net = nn.Sequential(nn.Conv2d(3, 32, 3), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 20))
    model = DistributedDataParallel(net.cuda(), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=6e-5)
    sampler.set_epoch(np.random.randint(args.max_iters))
    batches = iter(loader)
    for step in range(args.max_iters):
        try:
            images, labels = next(batches)
        except StopIteration:
            sampler.set_epoch(np.random.randint(args.max_iters))
            batches = iter(loader)
            images, labels = next(batches)
        loss = nn.functional.cross_entropy(model(images.cuda()), labels.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-iters", type=int, default=20000)
    args = parser.parse_args()
    fix_seed(args.seed)  # expect: DDP035
    train(args)

"""Classifier fine-tuning: one seed per rank for augmentation, handed to the sampler too."""
import argparse
import os
import random

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def get_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=3407)
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--batch-size", type=int, default=64)
    return parser.parse_args()


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def main():
    args = get_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    seed = args.seed + dist.get_rank()
    seed_everything(seed)

    features = torch.randn(20000, 128)
    labels = torch.randint(0, 10, (20000,))
    train_set = TensorDataset(features, labels)
    sampler = DistributedSampler(train_set, shuffle=True, seed=seed, drop_last=True)  # expect: DDP027
    loader = DataLoader(train_set, batch_size=args.batch_size, sampler=sampler, num_workers=2)

    model = nn.Sequential(nn.Linear(128, 256), nn.GELU(), nn.Linear(256, 10)).cuda(local_rank)
    model = DDP(model, device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            x, y = x.cuda(local_rank, non_blocking=True), y.cuda(local_rank, non_blocking=True)
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

"""Segmentation training; the sampler and loader keep their defaults.
A training sampler that pads repeats a few samples per epoch, a cost maintainers keep:
not reported."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=40)
    parser.add_argument("--batch-size", type=int, default=8)
    args = parser.parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    images = torch.randn(1003, 3, 64, 64)
    masks = torch.randint(0, 21, (1003, 64, 64))
    train_set = TensorDataset(images, masks)
    sampler = DistributedSampler(train_set, shuffle=True, seed=42)
    loader = DataLoader(train_set, batch_size=args.batch_size, sampler=sampler, num_workers=4)
    model = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.Conv2d(32, 21, 1))
    model = DDP(model.cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    scaler = torch.cuda.amp.GradScaler()
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            x, y = x.cuda(local_rank, non_blocking=True), y.cuda(local_rank, non_blocking=True)
            with torch.autocast("cuda", dtype=torch.float16):
                loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

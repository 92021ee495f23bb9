"""A script whose --local_rank option is required, started with torchrun by the project's
own run script: torchrun passes no such option on any torch release, so argparse stops every
process before training."""

import argparse

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel


def parse():
    parser = argparse.ArgumentParser(description="segmentation fine-tuning")
    parser.add_argument("--local_rank", type=int, required=True)  # expect: DDP040
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--lr", type=float, default=0.01)
    return parser.parse_args()


def main():
    args = parse()
    torch.cuda.set_device(args.local_rank)
    dist.init_process_group("nccl")
    net = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 4, 1))
    net = DistributedDataParallel(net.cuda(), device_ids=[args.local_rank])
    optimizer = torch.optim.SGD(net.parameters(), lr=args.lr, momentum=0.9)
    for _ in range(args.epochs):
        images = torch.randn(4, 3, 64, 64, device="cuda")
        masks = torch.randint(0, 4, (4, 64, 64), device="cuda")
        loss = nn.functional.cross_entropy(net(images), masks)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

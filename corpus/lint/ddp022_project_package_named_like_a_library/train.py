"""The training script of a repository whose package is named like a library on PyPI
(`timm` inside timm's own repository): `timm.utils` is found under the project root, so it
is read, and it takes the device from LOCAL_RANK. The old `--local_rank` argument only
absorbs what the deprecated launcher passes."""
import argparse

import torch
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

from timm import utils


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=3)
    args = parser.parse_args()
    device = utils.init_distributed_device(args)
    model = DDP(nn.Linear(10, 2).to(device), device_ids=[args.local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(args.epochs):
        optimizer.zero_grad()
        model(torch.randn(8, 10, device=device)).sum().backward()
        optimizer.step()


if __name__ == "__main__":
    main()

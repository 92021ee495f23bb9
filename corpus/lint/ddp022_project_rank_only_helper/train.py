"""The project helper reads RANK and WORLD_SIZE but never LOCAL_RANK: the device still
comes from the `--local_rank` argument, which torchrun does not pass."""
import argparse

import torch
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

import launch_utils


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=0)  # expect: DDP022
    args = parser.parse_args()
    launch_utils.setup(args)
    torch.cuda.set_device(args.local_rank)
    model = DDP(nn.Linear(16, 4).cuda(), device_ids=[args.local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(10):
        optimizer.zero_grad()
        model(torch.randn(8, 16).cuda()).sum().backward()
        optimizer.step()


if __name__ == "__main__":
    main()

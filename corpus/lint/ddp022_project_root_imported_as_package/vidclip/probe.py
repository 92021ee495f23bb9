"""A script of the same package that never calls the shared setup: it takes the GPU from
the `--local_rank` argument, which torchrun does not pass."""

import argparse

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=0)  # expect: DDP022
    args = parser.parse_args()
    torch.cuda.set_device(args.local_rank)
    dist.init_process_group("nccl")
    model = DDP(nn.Linear(32, 2).cuda(), device_ids=[args.local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(10):
        optimizer.zero_grad()
        model(torch.randn(4, 32).cuda()).sum().backward()
        optimizer.step()


if __name__ == "__main__":
    main()

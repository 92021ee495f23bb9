"""The strategy the project helper builds sets the device from `--local_rank` only: under
torchrun the argument keeps its default -1 on every rank."""
import argparse

import torch
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

from factory import arg_strategy


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=-1)  # expect: DDP022
    args = parser.parse_args()
    strategy = arg_strategy(args)
    strategy.setup()
    model = DDP(nn.Linear(16, 4).cuda())
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(10):
        optimizer.zero_grad()
        model(torch.randn(8, 16).cuda()).sum().backward()
        optimizer.step()
    if args.local_rank in (-1, 0):
        print("done")


if __name__ == "__main__":
    main()

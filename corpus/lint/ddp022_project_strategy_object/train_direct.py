"""The strategy object is built here from a project class that reads LOCAL_RANK when the
argument is not given."""
import argparse

import torch
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

from strategies import EnvStrategy


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=-1)
    args = parser.parse_args()
    EnvStrategy(args).setup()
    model = DDP(nn.Linear(16, 4).cuda())
    model(torch.randn(8, 16).cuda()).sum().backward()
    if args.local_rank in (-1, 0):
        print("done")


if __name__ == "__main__":
    main()

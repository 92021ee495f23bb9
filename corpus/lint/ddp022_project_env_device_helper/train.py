"""The old launcher's `--local_rank` argument is kept, but the device comes from
`dist_setup.init_distributed(args)`, which reads LOCAL_RANK from the environment and
overwrites `args.local_rank`: under torchrun every rank still gets its own GPU."""
import argparse

import torch
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

from dist_setup import init_distributed


def parse():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=0)
    parser.add_argument("--lr", type=float, default=0.1)
    return parser.parse_args()


def main():
    args = parse()
    init_distributed(args)
    model = DDP(nn.Linear(16, 4).cuda(args.local_rank), device_ids=[args.local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
    for _ in range(10):
        optimizer.zero_grad()
        model(torch.randn(8, 16, device=args.local_rank)).sum().backward()
        optimizer.step()


if __name__ == "__main__":
    main()

"""Classifier training; run.sh documents, in a commented-out command, the old launcher,
whose torch >= 2.0 form passes --local-rank, which this parser does not know; the active
command runs one process."""

import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def parse():
    parser = argparse.ArgumentParser(description="train a classifier")
    parser.add_argument("--epochs", type=int, default=90)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument(  # expect-preview: DDP040
        "--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0))
    )
    return parser.parse_args()


def main():
    args = parse()
    torch.cuda.set_device(args.local_rank)
    dist.init_process_group("nccl")
    model = DDP(nn.Linear(32, 4).cuda(args.local_rank), device_ids=[args.local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
    for _ in range(args.epochs):
        x = torch.randn(16, 32, device=f"cuda:{args.local_rank}")
        loss = model(x).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

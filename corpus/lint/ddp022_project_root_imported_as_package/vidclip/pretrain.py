"""Pretraining script of a repository imported as the package it is (`vidclip.tools` is
this folder's `tools/`): the device comes from LOCAL_RANK through the shared setup, so the
old `--local_rank` argument, still read for the log line, is only a leftover."""

import argparse

import torch
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

import vidclip.tools.dist_env as dist_env


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=-1)
    parser.add_argument("--steps", type=int, default=100)
    args = parser.parse_args()
    dist_env.setup_distributed(args)
    print(f"launcher local rank {args.local_rank}, device {args.gpu}")
    model = DDP(nn.Linear(32, 8).cuda(args.gpu), device_ids=[args.gpu])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for _ in range(args.steps):
        optimizer.zero_grad()
        model(torch.randn(16, 32, device=args.gpu)).pow(2).mean().backward()
        optimizer.step()


if __name__ == "__main__":
    main()

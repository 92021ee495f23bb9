"""Launched by run_train.sh with torch.distributed.launch, which passes the local rank as
an option in either spelling (`--local_rank` before torch 2.0, `--local-rank` after); the
parser knows both. Only torchrun, which the project does not use, would leave it at 0."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel


def parse():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--local_rank", "--local-rank", type=int, default=0)  # expect-preview: DDP022
    return parser.parse_args()


def main():
    args = parse()
    torch.cuda.set_device(args.local_rank)
    dist.init_process_group("nccl")
    net = DistributedDataParallel(nn.Linear(32, 8).cuda(), device_ids=[args.local_rank])
    opt = torch.optim.SGD(net.parameters(), lr=args.lr)
    for _ in range(args.epochs):
        opt.zero_grad()
        net(torch.randn(16, 32).cuda()).pow(2).mean().backward()
        opt.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

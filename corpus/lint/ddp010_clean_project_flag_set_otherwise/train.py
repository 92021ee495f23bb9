"""Distributed training entry point: rank 0 reports."""

import argparse
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from engine import train_and_sync
from model import build_model, build_loader


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=10)
    args = parser.parse_args()
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(build_model().cuda(), device_ids=[local_rank])
    args.verbose = dist.get_rank() == 0
    train_and_sync(model, build_loader(distributed=True), args)


if __name__ == "__main__":
    main()

"""Fine-tuning entry point: every rank logs its own progress to its own stream."""

import argparse

import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from engine import train_and_sync
from model import build_model, build_loader


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=3)
    args = parser.parse_args()
    dist.init_process_group("gloo")
    model = DDP(build_model())
    args.verbose = True
    train_and_sync(model, build_loader(distributed=True), args)


if __name__ == "__main__":
    main()

"""Scene-graph relation training: the entry point."""

import argparse
import os

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

from lib.model import train


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=12)
    parser.add_argument("--lr", type=float, default=0.01)
    args = parser.parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    data = TensorDataset(torch.randn(512, 256), torch.randn(512, 256), torch.randint(0, 51, (512,)))
    loader = DataLoader(data, batch_size=32, sampler=DistributedSampler(data), drop_last=True)
    train(args, loader, local_rank)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

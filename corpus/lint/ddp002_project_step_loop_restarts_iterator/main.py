"""Matting-style training: `main()` builds the loaders and hands them to the trainer of
another module, whose step loop restarts the iterator when it runs out. Nothing in the
project moves the sampler's epoch, so every pass over the data repeats one order."""
import argparse
import os

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, TensorDataset

from trainers.trainer import Trainer


def main(args):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    data = TensorDataset(torch.randn(4096, 4, 64, 64), torch.rand(4096, 1, 64, 64))
    sampler = torch.utils.data.distributed.DistributedSampler(data)  # expect: DDP002
    loader = DataLoader(data, batch_size=16, sampler=sampler, num_workers=4, drop_last=True)
    Trainer(loader, local_rank, args.total_steps).train()
    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--total-steps", type=int, default=200000)
    main(parser.parse_args())

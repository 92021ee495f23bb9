"""Entry point: `torchrun --nproc_per_node=4 train.py --data /data/matting`."""
import argparse

import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

from networks import build_generator, matting_dataset
from trainers.trainer import Trainer


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", required=True)
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--out", default="checkpoints")
    args = parser.parse_args()
    dist.init_process_group("nccl")
    dataset = matting_dataset(args.data)
    loader = DataLoader(dataset, batch_size=8, sampler=DistributedSampler(dataset), num_workers=4)
    Trainer(build_generator(), loader, args.out).train(args.epochs)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

"""Momentum-contrast pre-training in the style of the ImageNet example: the seed branch runs
only with --seed, which none of the project's commands (pretrain.sh) passes; without it,
the workers run unseeded on purpose."""
import argparse
import random

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

parser = argparse.ArgumentParser(description="MoCo pre-training")
parser.add_argument("data", metavar="DIR")
parser.add_argument("--epochs", default=200, type=int)
parser.add_argument("--lr", default=0.03, type=float)
parser.add_argument("--dist-url", default="tcp://localhost:10001", type=str)
parser.add_argument("--seed", default=None, type=int, help="seed for initializing training")
parser.add_argument("--multiprocessing-distributed", action="store_true")


def main_worker(gpu, ngpus, args):
    dist.init_process_group("nccl", init_method=args.dist_url, world_size=ngpus, rank=gpu)
    torch.cuda.set_device(gpu)
    encoder = nn.Sequential(nn.Flatten(), nn.Linear(3 * 224 * 224, 128))
    model = DDP(encoder.cuda(gpu), device_ids=[gpu])
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    for _ in range(args.epochs):
        q = model(torch.randn(32, 3, 224, 224, device=gpu))
        loss = q.pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    dist.destroy_process_group()


def main():
    args = parser.parse_args()
    if args.seed is not None:
        random.seed(args.seed)  # expect-preview: DDP041
        torch.manual_seed(args.seed)
    ngpus = torch.cuda.device_count()
    mp.spawn(main_worker, nprocs=ngpus, args=(ngpus, args))


if __name__ == "__main__":
    main()

"""ImageNet-style launcher: the seed is set in the parent, then mp.spawn starts the
workers in fresh interpreters that never see it."""
import argparse
import random

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main_worker(gpu, ngpus, args):
    dist.init_process_group(
        "nccl", init_method="tcp://127.0.0.1:23456", rank=gpu, world_size=ngpus
    )
    torch.cuda.set_device(gpu)
    model = DDP(nn.Linear(128, 10).cuda(gpu), device_ids=[gpu])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(args.steps):
        x = torch.ones(32, 128, device=f"cuda:{gpu}")
        loss = model(x).logsumexp(1).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--steps", type=int, default=1000)
    args = parser.parse_args()
    if args.seed is not None:
        random.seed(args.seed)  # expect: DDP041
        np.random.seed(args.seed)
        torch.manual_seed(args.seed)
    ngpus = torch.cuda.device_count()
    mp.spawn(main_worker, nprocs=ngpus, args=(ngpus, args))


if __name__ == "__main__":
    main()

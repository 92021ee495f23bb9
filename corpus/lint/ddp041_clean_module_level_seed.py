"""A module-level seed: each spawned worker imports the script again and runs it too."""
import argparse
import random

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


seed_everything(1234)


def train(rank, world_size, epochs):
    dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29511", rank=rank,
                            world_size=world_size)
    torch.cuda.set_device(rank)
    model = DDP(nn.Linear(64, 64).cuda(rank), device_ids=[rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for _ in range(epochs):
        x = torch.ones(16, 64, device=f"cuda:{rank}")
        loss = model(x).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--epochs", type=int, default=10)
    args = parser.parse_args()
    world_size = torch.cuda.device_count()
    mp.spawn(train, args=(world_size, args.epochs), nprocs=world_size, join=True)

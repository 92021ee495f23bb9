"""Spawned workers join a group whose backend is a module constant set to gloo; each
worker trains its replica on its own GPU."""
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

BACKEND = "gloo"
MASTER = ("localhost", "29517")


def worker(rank, world_size):
    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = MASTER
    dist.init_process_group(BACKEND, rank=rank, world_size=world_size)  # expect: DDP032
    torch.cuda.set_device(rank)
    data = TensorDataset(torch.randn(6000, 100), torch.randint(0, 10, (6000,)))
    sampler = DistributedSampler(data, num_replicas=world_size, rank=rank, drop_last=True)
    loader = DataLoader(data, batch_size=60, sampler=sampler)
    model = DDP(nn.Linear(100, 10).to(rank), device_ids=[rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(5):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.to(rank)), y.to(rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    world_size = 4
    mp.spawn(worker, args=(world_size,), nprocs=world_size, join=True)

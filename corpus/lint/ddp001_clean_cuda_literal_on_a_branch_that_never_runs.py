"""The device is the spawn index whenever CUDA is available; the nested fallback names
`cuda:0` only where CUDA is available and, at once, is not: that branch never runs, and
without CUDA the device is the CPU."""
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def worker(rank, world_size):
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29500")
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    torch.cuda.set_device(rank)
    device = rank if torch.cuda.is_available() else torch.device(
        "cuda:0" if torch.cuda.is_available() else "cpu"
    )
    model = DDP(nn.Linear(8, 8).to(device), device_ids=[rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(100):
        loss = model(torch.randn(16, 8, device=device)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(worker, args=(torch.cuda.device_count(),), nprocs=torch.cuda.device_count())

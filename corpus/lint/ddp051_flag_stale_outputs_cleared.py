"""An `mp.spawn` trainer whose worker clears stale outputs at start-up with `Path.unlink()`
and `os.unlink`: every worker deletes the same files."""

import os
from pathlib import Path

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

OUT = Path("runs/exp1")


def worker(rank, world_size):
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29541")
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    torch.cuda.set_device(rank)
    done = OUT / "done.flag"
    if done.exists():
        done.unlink()  # expect: DDP051
    if os.path.exists("runs/exp1/metrics.csv"):
        os.unlink("runs/exp1/metrics.csv")  # expect: DDP051
    model = DDP(torch.nn.Linear(16, 8).cuda(rank), device_ids=[rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    data = TensorDataset(torch.randn(1024, 16))
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=64, sampler=sampler)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for (x,) in loader:
            loss = model(x.cuda(rank)).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    n = torch.cuda.device_count()
    mp.spawn(worker, args=(n,), nprocs=n)

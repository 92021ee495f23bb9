"""A trainer that runs in one of three modes: DDP (spawned, one GPU per rank),
DataParallel, or one local GPU. The device expression picks the rank's GPU in DDP mode
and GPU 0 otherwise: `cuda:0` is the fallback of the modes that start no job, but
whether that side ever runs in the job hangs on a mode string ddplint does not tie to
the process group: unproven."""
import os
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class Trainer:
    def __init__(self, mode, rank=0, world_size=1):
        self.mode = mode
        self.rank = rank
        if self.mode == "ddp":
            os.environ.setdefault("MASTER_ADDR", "localhost")
            os.environ.setdefault("MASTER_PORT", "12355")
            dist.init_process_group("nccl", rank=rank, world_size=world_size)
        self.device = torch.device(
            f"cuda:{self.rank}" if self.mode == "ddp" else "cuda" if self.mode == "dp" else "cuda:0"  # expect-preview: DDP001
        )
        model = nn.Sequential(nn.Linear(128, 256), nn.ReLU(), nn.Linear(256, 10)).to(self.device)
        if self.mode == "ddp":
            model = DDP(model, device_ids=[rank])
        elif self.mode == "dp":
            model = nn.DataParallel(model)
        self.model = model
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=1e-3)

    def fit(self, steps):
        for _ in range(steps):
            x = torch.randn(64, 128, device=self.device)
            y = torch.randint(0, 10, (64,), device=self.device)
            loss = nn.functional.cross_entropy(self.model(x), y)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()


def worker(rank, world_size):
    Trainer("ddp", rank, world_size).fit(100)
    dist.destroy_process_group()


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "local"
    if mode == "ddp":
        n = torch.cuda.device_count()
        mp.spawn(worker, args=(n,), nprocs=n)
    else:
        Trainer(mode).fit(100)

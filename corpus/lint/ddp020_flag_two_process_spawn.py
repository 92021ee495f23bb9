"""The twin of `ddp020_clean_one_process_spawn.py` with two processes spawned: both
workers use the default CUDA device, GPU 0, and no worker sets its own."""
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def run_step(wrap):
    model = torch.nn.Linear(8, 8).to("cuda")  # expect: DDP020
    if wrap:
        model = torch.nn.parallel.DistributedDataParallel(model)
    model(torch.randn(4, 8, device="cuda")).sum().backward()  # expect: DDP020


def _worker(rank, world_size):
    os.environ.setdefault("MASTER_ADDR", "localhost")
    os.environ.setdefault("MASTER_PORT", "29513")
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    run_step(True)
    dist.destroy_process_group()


def test_step():
    run_step(False)


def test_step_wrapped():
    world_size = 2
    mp.spawn(_worker, args=(world_size,), nprocs=world_size, join=True)

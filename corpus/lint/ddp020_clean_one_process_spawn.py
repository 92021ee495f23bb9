"""A test module that runs the same step alone and in a spawned job of one process
(`mp.spawn(..., nprocs=world_size)` with `world_size = 1`): the spawned worker is the
only process, so the default CUDA device is its own."""
import os

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def run_step(wrap):
    model = torch.nn.Linear(8, 8).to("cuda")
    if wrap:
        model = torch.nn.parallel.DistributedDataParallel(model)
    model(torch.randn(4, 8, device="cuda")).sum().backward()


def _worker(rank, world_size):
    os.environ.setdefault("MASTER_ADDR", "localhost")
    os.environ.setdefault("MASTER_PORT", "29512")
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    run_step(True)
    dist.destroy_process_group()


needs_gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")


@needs_gpu
def test_step():
    run_step(False)


@needs_gpu
def test_step_wrapped():
    world_size = 1
    mp.spawn(_worker, args=(world_size,), nprocs=world_size, join=True)

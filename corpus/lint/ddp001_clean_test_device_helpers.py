"""Test helpers of a graph library. `with_cuda` parametrizes pytest tests with the CPU and
the first GPU: pytest runs those tests in its one process, so GPU 0 is right for them.
`run_on_ranks` starts a real job for the distributed tests, and every one of its workers
hands the test GPU 0."""

import os

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def with_cuda(func):
    """Run the test on the CPU and, when there is one, on the first GPU."""
    devices = [pytest.param(torch.device("cpu"), id="cpu")]
    if torch.cuda.is_available():
        devices.append(pytest.param(torch.device("cuda:0"), id="cuda:0"))
    return pytest.mark.parametrize("device", devices)(func)


def _worker(rank, world_size, test):
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29541")
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    try:
        test(rank, torch.device("cuda:0"))  # expect: DDP001
    finally:
        dist.destroy_process_group()


def run_on_ranks(test, world_size=2):
    """Run `test(rank, device)` in a job of `world_size` processes."""
    mp.spawn(_worker, args=(world_size, test), nprocs=world_size, join=True)

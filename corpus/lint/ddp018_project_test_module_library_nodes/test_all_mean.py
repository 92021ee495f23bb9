"""A unit test of the library's averaging, run by the test runner on one machine: the
device from the global rank would matter only on a second node, and nothing in this test
or in a command that names it runs one (the library's node handling is for the training
jobs, not for this test)."""
import os

import pytest
import torch
import torch.distributed as dist

from trainlib.launch import all_mean


@pytest.mark.skipif("WORLD_SIZE" not in os.environ, reason="needs torchrun")
def test_all_mean_distributed():
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    torch.cuda.set_device(rank)  # expect-preview: DDP018
    assert all_mean(float(rank)) == pytest.approx((dist.get_world_size() - 1) / 2)
    dist.destroy_process_group()

"""pytest tests of an averaging helper. Two tests run in the one pytest process: one is
skipped whenever a launcher set WORLD_SIZE (it makes a group of one itself), the other
shows no sign of a job at all. GPU 0 is right for both. The test that takes the launcher's
`local_rank` fixture runs on every rank, and its GPU 0 is reported."""

import os

import pytest
import torch
import torch.distributed as dist


def average(tensor):
    dist.all_reduce(tensor)
    return tensor / dist.get_world_size()


@pytest.mark.distributed
@pytest.mark.skipif("WORLD_SIZE" in os.environ, reason="the group of one is made here")
def test_average_in_a_group_of_one():
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29531", rank=0, world_size=1)
    ones = torch.ones(4, device="cuda:0")
    assert torch.equal(average(ones.cpu()), torch.ones(4))
    dist.destroy_process_group()


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
def test_average_keeps_the_shape():
    grid = torch.zeros(2, 3, device="cuda:0").cuda()
    assert grid.shape == (2, 3)


@pytest.mark.distributed
def test_average_across_ranks(local_rank):
    values = torch.full((4,), float(local_rank), device="cuda:0")  # expect: DDP001
    assert average(values.cpu()).shape == (4,)

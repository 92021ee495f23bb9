"""A Ray actor given a GPU sees only its own GPU, so the default CUDA device is right there;
tensors made under `FakeTensorMode` only describe shapes and take no GPU memory; a helper
that only a single-process test calls builds its expected value in that one process. The
launched trainer and the helper it calls use the default device on every rank without
choosing one."""

import unittest

import ray
import torch
import torch.distributed as dist
from torch import nn
from torch._subclasses.fake_tensor import FakeTensorMode


@ray.remote(num_gpus=1)
class Learner:
    def __init__(self):
        dist.init_process_group("nccl")
        self.model = nn.Linear(16, 16).cuda()

    def shapes(self):
        with FakeTensorMode():
            fake = {
                k: torch.empty(v.shape, device="cuda") for k, v in self.model.state_dict().items()
            }
        return {k: tuple(v.shape) for k, v in fake.items()}


def plan_memory(shapes):
    with FakeTensorMode():
        return sum(torch.empty(s, device="cuda").numel() for s in shapes)


def train():
    dist.init_process_group("nccl")
    model = nn.Linear(16, 16).cuda()  # expect: DDP020
    return model


def expected_sums(rows):
    return torch.tensor([sum(r) for r in rows]).cuda()


def launched_sums(rows):
    return torch.tensor([sum(r) for r in rows]).cuda()  # expect: DDP020


class SumTest(unittest.TestCase):
    def test_sums(self):
        rows = [[1, 2], [3, 4]]
        got = torch.tensor(rows).cuda().sum(dim=1)
        self.assertTrue(torch.equal(got, expected_sums(rows)))


def evaluate(rows):
    dist.init_process_group("nccl")
    return launched_sums(rows)


def worker(rank, world_size):
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    return nn.Linear(4, 4).cuda()  # expect: DDP020


def launch(world_size, spawn):
    if world_size > 1:
        torch.multiprocessing.spawn(worker, args=(world_size,), nprocs=world_size)
    else:
        worker(0, 1)

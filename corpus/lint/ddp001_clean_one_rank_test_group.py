"""GPU tests that start a process group of one rank (the collectives run, but there is one
process), tests that stand in for one rank of a sharded job, and the parent test process
that builds each rank's input before it launches the workers: all run in one process, so a
literal GPU is right there. The workers themselves run once per rank."""

import os
import unittest

import torch
import torch.distributed as dist
from embedkit.testing import MultiProcessTestBase, ShardedEnv, shard_table


class OneRankGroupTest(unittest.TestCase):
    def setUp(self):
        os.environ["RANK"] = "0"
        os.environ["WORLD_SIZE"] = "1"
        os.environ["MASTER_ADDR"] = "127.0.0.1"
        os.environ["MASTER_PORT"] = "29517"
        self.device = torch.device("cuda:0")
        dist.init_process_group("nccl")

    def tearDown(self):
        dist.destroy_process_group()

    def test_all_reduce_is_identity(self):
        t = torch.ones(3, device=self.device)
        dist.all_reduce(t)
        self.assertEqual(t.sum().item(), 3.0)


class ExplicitSingleRankTest(unittest.TestCase):
    def test_broadcast(self):
        store = dist.HashStore()
        dist.init_process_group("nccl", rank=0, world_size=1, store=store)
        t = torch.arange(4, device="cuda:0")
        dist.broadcast(t, src=0)
        self.assertEqual(dist.get_world_size(), 1)
        dist.destroy_process_group()


class LaunchedGroupTest(unittest.TestCase):
    """Run under torchrun: every rank executes these tests."""

    def setUp(self):
        dist.init_process_group("nccl")

    def test_all_reduce(self):
        t = torch.ones(3, device="cuda:0")  # expect: DDP001
        dist.all_reduce(t)
        self.assertEqual(t.sum().item(), 3.0 * dist.get_world_size())


def _gather_rows(rank, world_size, shards, expected):
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    out = torch.empty(8, 4, device=torch.device("cuda:0"))  # expect: DDP001
    dist.all_gather_into_tensor(out, shards[rank])
    assert torch.equal(out.cpu(), expected)


class ShardingTest(MultiProcessTestBase):
    def test_gather_rows(self):
        first = torch.rand(4, 4, device=torch.device("cuda:0"))
        second = torch.rand(4, 4, device=torch.device("cuda:1"))
        expected = torch.cat([first.cpu(), second.cpu()])
        self._run_multi_process_test(
            callable=_gather_rows, world_size=2, shards=[first, second], expected=expected
        )

    def test_inference_shard(self):
        device = torch.device("cuda:0")
        table = shard_table(rows=16, env=ShardedEnv.from_local(world_size=2, rank=0), device=device)
        self.assertEqual(table.local_rows, 8)

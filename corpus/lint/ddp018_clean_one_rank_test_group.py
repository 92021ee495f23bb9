"""A test that starts a process group of one rank and then picks its GPU from the global
rank: with one process the rank is 0, the right GPU on any machine. The worker launched on
several nodes does the same and is wrong on every node but the first."""

import os
import unittest

import torch
import torch.distributed as dist


class SingleRankTest(unittest.TestCase):
    def setUp(self):
        os.environ["RANK"] = "0"
        os.environ["WORLD_SIZE"] = "1"
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", "29533")
        dist.init_process_group("nccl")

    def test_device_from_rank(self):
        rank = dist.get_rank()
        device = torch.device(f"cuda:{rank}")
        torch.cuda.set_device(device)
        self.assertEqual(torch.ones(2, device=device).sum().item(), 2.0)


def train():
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    device = torch.device(f"cuda:{rank}")  # expect-preview: DDP018
    torch.cuda.set_device(device)
    return torch.zeros(4, device=device)

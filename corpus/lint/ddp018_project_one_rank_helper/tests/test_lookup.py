"""The lookup tests start a group of one rank through a helper of another module: the rank
is 0, the right GPU. The launched test joins a group of many ranks, over several nodes."""

import unittest

import torch
import torch.distributed as dist
from dist_helpers import join_launched_group, start_single_rank


class LookupTest(unittest.TestCase):
    def test_lookup_on_own_gpu(self):
        start_single_rank()
        rank = dist.get_rank()
        device = torch.device(f"cuda:{rank}")
        table = torch.arange(10, device=device)
        self.assertEqual(table[3].item(), 3)


class LaunchedLookupTest(unittest.TestCase):
    def test_lookup_per_rank(self):
        join_launched_group()
        rank = dist.get_rank()
        device = torch.device(f"cuda:{rank}")  # expect-preview: DDP018
        table = torch.arange(10, device=device)
        self.assertEqual(table[3].item(), 3)

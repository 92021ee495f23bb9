"""A test module: the multi-process tests run on gloo (spawned, no GPU), and the GPU tests
are plain TestCase classes that run in the single test process, where the default CUDA
device is the right one."""
import os
import unittest

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from accelerate.utils import set_seed
from torch.nn.parallel import DistributedDataParallel as DDP


def _worker(rank, world_size, port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    model = DDP(nn.Linear(4, 2))
    model(torch.randn(3, 4)).sum().backward()
    dist.destroy_process_group()


class TestGradientSync(unittest.TestCase):
    def test_two_ranks(self):
        mp.spawn(_worker, args=(2, 29531), nprocs=2, join=True)


@unittest.skipUnless(torch.cuda.is_available(), "needs a GPU")
class TestMixedPrecision(unittest.TestCase):
    def setUp(self):
        set_seed(0)  # a launcher library's helper: not a process group
        self.model = nn.Linear(4, 2).cuda()

    def test_autocast_forward(self):
        x = torch.randn(3, 4).cuda()
        with torch.autocast("cuda", dtype=torch.float16):
            y = self.model(x)
        self.assertEqual(y.dtype, torch.float16)


if __name__ == "__main__":
    unittest.main()

"""Unit tests of the encoder: the single-process tests run on the GPU when there is one,
through the module's `DEVICE`; the distributed test spawns two gloo workers that build
their model and batches on the CPU and never read `DEVICE`. Which uses of a test
module's constant the distributed workers reach is out of sight: unproven."""
import os

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP

from tiny_model import TinyEncoder

DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")  # expect-preview: DDP020


def test_forward_shape():
    model = TinyEncoder().to(DEVICE)
    tokens = torch.randint(0, 100, (4, 7), device=DEVICE)
    assert model(tokens).shape == (4, 100)


def _worker(rank, world_size, port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    torch.manual_seed(0)
    model = DDP(TinyEncoder())
    tokens = torch.randint(0, 100, (2, 5))
    model(tokens).sum().backward()
    grads = [p.grad.clone() for p in model.parameters()]
    for grad in grads:
        other = grad.clone()
        dist.all_reduce(other)
        assert torch.allclose(other / world_size, grad)
    dist.destroy_process_group()


@pytest.mark.timeout(60)
def test_ddp_gradients_agree(unused_tcp_port):
    mp.spawn(_worker, args=(2, unused_tcp_port), nprocs=2)

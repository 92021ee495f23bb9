"""A multi-process correctness test: the parent seeds torch, draws the reference input
and the expected loss, and hands both to every spawned worker, which only checks its
shard of the computation. The seed is there for the parent's draws; the workers draw
nothing, so it is not reported."""
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F


def run(rank, world_size, logits, targets, expected):
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29531")
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    shard = logits.chunk(world_size, dim=-1)[rank]
    local_max = shard.max(dim=-1).values
    dist.all_reduce(local_max, op=dist.ReduceOp.MAX)
    loss = F.cross_entropy(logits, targets)
    assert torch.allclose(loss, expected)
    dist.destroy_process_group()


def test_sharded_cross_entropy(world_size=2):
    torch.manual_seed(69)
    logits = torch.randn(4, 8)
    targets = torch.randint(0, 8, (4,))
    expected = F.cross_entropy(logits, targets)
    mp.spawn(run, args=(world_size, logits, targets, expected), nprocs=world_size, join=True)


if __name__ == "__main__":
    test_sharded_cross_entropy()

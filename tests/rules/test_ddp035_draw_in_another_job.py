"""DDP035 takes a per-step draw as evidence only where a seeding reaches it: a demo the
file also spawns (`example()`, drawing `torch.randn` for a toy step) is another job, and
the seeded training's own steps draw nothing."""

from __future__ import annotations

from ddplint.api import lint_source

SCRIPT = """\
import random

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler


def set_seeds(seed=42):
    random.seed(seed)
    torch.manual_seed(seed)


def train(rank, world_size, dataset):
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    set_seeds(42)
    model = DDP(torch.nn.Linear(10, 10).to(rank), device_ids=[rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    loader = DataLoader(dataset, batch_size=8, sampler=DistributedSampler(dataset))
    for epoch in range(10):
        loader.sampler.set_epoch(epoch)
        for x, y in loader:
            optimizer.zero_grad()
            {train_step}
            optimizer.step()


def example(rank, world_size):
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    model = DDP(torch.nn.Linear(10, 10).to(rank), device_ids=[rank])
    torch.nn.functional.mse_loss(model(torch.randn(20, 10)), torch.randn(20, 10)).backward()


if __name__ == "__main__":
    mp.spawn(example, args=(4,), nprocs=4)
"""


def findings(train_step: str) -> list:
    return [
        d
        for d in lint_source(SCRIPT.format(train_step=train_step), select=["DDP035"])
        if not d.unproven
    ]


def test_a_draw_in_a_demo_spawned_apart_proves_nothing():
    assert findings("torch.nn.functional.mse_loss(model(x), y).backward()") == []


def test_a_draw_in_the_seeded_training_step_is_reported():
    step = "torch.nn.functional.mse_loss(model(x + 0.1 * torch.randn_like(x)), y).backward()"
    [finding] = findings(step)
    assert "every training step draws from it" in finding.message

"""DDP002 on a sampler a data module builds, in a project that never sets an epoch: when
the function building it draws a new random order of its data first (`torch.randperm`,
`random.shuffle`, directly or through a function of its module), each call shards a new
order, so whether the epochs repeat one depends on whether each pass builds the loader
anew: unproven, and the message says so."""

from __future__ import annotations

import pytest
from test_recall_ckpt_resume import findings, line_of

DATA = """\
import random

import torch
from torch.utils.data import DataLoader, DistributedSampler


def shuffled(items):
    order = torch.randperm(len(items))
    return [items[i] for i in order]


def build_loader(items, rank, world_size):
    {prepare}
    sampler = DistributedSampler(parts, num_replicas=world_size, rank=rank, shuffle=True)
    return DataLoader(parts, batch_size=1, sampler=sampler)
"""

TRAIN = """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from data import build_loader


def main(model, items, optimizer, epochs):
    dist.init_process_group("nccl")
    rank, world_size = dist.get_rank(), dist.get_world_size()
    model = DDP(model)
    for epoch in range(epochs):
        loader = build_loader(items, rank, world_size)
        for x in loader:
            model(x).sum().backward()
            optimizer.step()


if __name__ == "__main__":
    main(None, [], None, 10)
"""


@pytest.mark.parametrize(
    "prepare",
    [
        "parts = shuffled(items)",
        "parts = list(items)\n    random.shuffle(parts)",
    ],
)
def test_a_builder_drawing_a_new_order_is_unproven(cli, write, prepare) -> None:
    write("pyproject.toml", "[project]\nname = 'demo'\n")
    data = write("data.py", DATA.format(prepare=prepare))
    write("train.py", TRAIN)
    row = line_of(data, "sampler = DistributedSampler")
    assert findings(cli, data, "--select", "DDP002", "--preview") == [(row, "DDP002", True)]
    result = cli("check", "--exit-zero", "--preview", "--select", "DDP002", str(data))
    assert "unless each pass calls `build_loader()` anew" in result.out


def test_a_builder_with_a_fixed_order_is_proven(cli, write) -> None:
    write("pyproject.toml", "[project]\nname = 'demo'\n")
    data = write("data.py", DATA.format(prepare="parts = list(items)"))
    write("train.py", TRAIN)
    row = line_of(data, "sampler = DistributedSampler")
    assert findings(cli, data, "--select", "DDP002") == [(row, "DDP002", False)]

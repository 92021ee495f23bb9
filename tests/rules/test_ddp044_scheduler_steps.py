"""DDP044 on a learning-rate scheduler stepped on some ranks only."""

from __future__ import annotations

import textwrap

import pytest

from ddplint.api import lint_source

TRAIN = """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def main(net, loader, epochs, local_rank):
    dist.init_process_group("nccl")
    model = DDP(net.cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=30)
    for epoch in range(epochs):
        for x, y in loader:
            loss = torch.nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
{stepping}
"""


def rows(stepping: str) -> list[tuple[int, bool]]:
    source = TRAIN.format(stepping=textwrap.indent(textwrap.dedent(stepping), " " * 8))
    return [(d.start.row, d.unproven) for d in lint_source(source, select=["DDP044"])]


def test_a_scheduler_stepped_on_one_rank_is_reported():
    assert rows("if dist.get_rank() == 1:\n    scheduler.step()\n") == [(18, False)]


@pytest.mark.parametrize(
    "stepping",
    [
        "scheduler.step()\n",
        "if dist.get_rank() == 0:\n    print(scheduler.get_last_lr())\nscheduler.step()\n",
        "if dist.get_rank() == 0:\n    scheduler.step()\nelse:\n    scheduler.step()\n",
        "if dist.get_rank() == 0:\n    optimizer.zero_grad()\n",
    ],
)
def test_every_rank_stepping_the_scheduler_is_left_alone(stepping):
    assert rows(stepping) == []

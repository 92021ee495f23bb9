"""DDP021 on training steps (forward and `backward()`) through the DDP wrapper on one rank."""

from __future__ import annotations

import textwrap

from ddplint.api import lint_source

SOURCE = """\
import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from hub import build_model

def record_lr(model, loader, optimizer):
    for x, y in loader:
        {step}
        optimizer.step()

def main(args, loader):
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    model = DDP(build_model().cuda(), device_ids=[int(os.environ["LOCAL_RANK"])])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    if rank == 0 and args.find_lr:
        record_lr(model, loader, optimizer)
"""


def findings(step: str) -> list[tuple[int, bool, str]]:
    source = textwrap.dedent(SOURCE).replace("{step}", step)
    return [(d.start.row, d.unproven, d.message) for d in lint_source(source, select=["DDP021"])]


def test_rank_zero_training_step_is_proven_whatever_the_buffers():
    ((row, unproven, message),) = findings("model(x).sum().backward()")
    assert (row, unproven) == (9, False)
    assert "DDP's backward all-reduces the gradients" in message


def test_training_step_under_no_sync_rests_on_the_buffers():
    ((row, unproven, message),) = findings(
        "with model.no_sync():\n            model(x).sum().backward()"
    )
    assert (row, unproven) == (10, True)
    assert "broadcasts buffers" in message


def test_backward_under_a_condition_of_its_own_rests_on_the_buffers():
    ((row, unproven, _),) = findings(
        "loss = model(x).sum()\n        if args.train:\n            loss.backward()"
    )
    assert (row, unproven) == (9, True)

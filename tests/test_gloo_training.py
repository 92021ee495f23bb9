"""DDP032 speaks of gradient all-reduces: proven where the file trains its CUDA model
(`backward()`, or a setup helper returning the DDP model to its callers), unproven where
it only hands the model to functions out of sight, silent in a script that runs the
model forward alone (sampling, evaluation)."""

from __future__ import annotations

import pytest

from ddplint.api import lint_source

SCRIPT = """
import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from sampling import draw_views


def main(net, loader):
    dist.init_process_group("gloo")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(net.cuda(local_rank), device_ids=[local_rank])
    {use}
"""


@pytest.mark.parametrize(
    ("use", "expected"),
    [
        ("for x in loader:\n        model(x.cuda()).sum().backward()", [False]),
        ("draw_views(model, loader)", [True]),
        ("with torch.no_grad():\n        print(model(next(iter(loader)).cuda()))", []),
    ],
    ids=["trains", "hands the model on", "forward only"],
)
def test_the_finding_follows_what_the_script_does(use: str, expected: list[bool]) -> None:
    found = lint_source(SCRIPT.format(use=use), select=["DDP032"])
    assert [d.unproven for d in found] == expected

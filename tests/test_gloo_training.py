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


TRAINS = "def draw_views(model, loader):\n    for x in loader:\n        model(x).sum().backward()\n"
SAMPLES = "def draw_views(model, loader):\n    return [model(x) for x in loader]\n"


@pytest.mark.parametrize(
    ("helper", "unproven"), [(TRAINS, False), (SAMPLES, True)], ids=["trains it", "samples"]
)
def test_a_project_function_handed_the_model(cli, write, helper: str, unproven: bool) -> None:
    """Handed to a function of another project module that runs `backward()`, the model
    trains (proven); to one that only samples, it is still out of sight (unproven)."""
    write("pyproject.toml", "[project]\nname = 'demo'\n")
    write("sampling.py", helper)
    train = write("train.py", SCRIPT.format(use="draw_views(model, loader)"))
    args = ("--exit-zero", "--preview", "--output-format", "json", "--select", "DDP032")
    result = cli("check", *args, str(train))
    assert [d.get("unproven", False) for d in result.json()] == [unproven]

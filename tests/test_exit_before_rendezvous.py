"""DDP047 names the first place the ranks that stay wait for the one that left: a rank-gated
`return` before the process group starts leaves the others in `init_process_group` (its
rendezvous needs every rank), directly, in a function of the file or in a project helper,
before any DDP constructor."""

from __future__ import annotations

import pytest

INIT = {
    "direct": ("", 'dist.init_process_group("nccl")'),
    "this file": (
        'def start():\n    dist.init_process_group("nccl")\n\n\n',
        "start()",
    ),
}

TRAIN = """\
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


{helper}def main(model, loader, log_path):
    rank = int(os.environ["RANK"])
    if rank == 0:
        if os.path.exists(log_path):
            print("this experiment exists already")
            return -1
    {init}
    model = DDP(model)
    for x, y in loader:
        model(x).sum().backward()
"""


def project_output(cli, write, source: str, code: str) -> str:
    """What `ddplint check --select CODE train.py` prints in a project of `train.py`
    holding `source`."""
    write("pyproject.toml", "[project]\nname = 'demo'\n")
    train = write("train.py", source)
    return cli("check", "--exit-zero", "--select", code, str(train)).out


@pytest.mark.parametrize("where", sorted(INIT))
def test_the_rendezvous_is_named(cli, write, where) -> None:
    helper, init = INIT[where]
    out = project_output(cli, write, TRAIN.format(helper=helper, init=init), "DDP047")
    assert "DDP047" in out
    assert "it joins the process group: `init_process_group` returns once" in out
    assert "constructor" not in out


def test_a_project_helper_starting_the_group_is_named(cli, write) -> None:
    write(
        "dist_utils.py",
        "import torch.distributed as dist\n\n\ndef init_device(args):\n"
        '    dist.init_process_group("nccl")\n    return "cuda"\n',
    )
    source = TRAIN.format(helper="", init="init_device(None)").replace(
        "import torch\n", "import torch\nfrom dist_utils import init_device\n", 1
    )
    out = project_output(cli, write, source, "DDP047")
    assert "`init_device(None)` (it joins the process group" in out

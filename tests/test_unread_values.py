"""A hard-coded device stored where nothing reads it places nothing (DDP001,
`domain/unread_names`): a plain name the file never reads again, or an attribute of a
name (`args.device = torch.device("cuda:0")`) that no code of the project reads: not
written elsewhere as `.device` (a call such as `torch.device(...)` is no read), not named
in a string, and no object read as a whole namespace (`vars(args)`)."""

from __future__ import annotations

import pytest
from test_recall_ckpt_resume import findings

TRAIN = """\
import argparse
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=1)
    args = parser.parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    dist.init_process_group("nccl")
    args.device = torch.device("cuda:0")
    model = DDP(torch.nn.Linear(4, 4).to(device), device_ids=[local_rank])
    {use}
"""


@pytest.mark.parametrize(
    ("use", "flagged"),
    [
        ("print(args.epochs)", False),
        ("batch = torch.randn(2, 4).to(args.device)", True),
        ('print(getattr(args, "device"))', True),
        ("print(vars(args))", True),
    ],
    ids=["never read", "read", "read by name", "namespace read"],
)
def test_a_device_stored_on_an_attribute_nothing_reads(cli, write, use, flagged) -> None:
    write("pyproject.toml", "[project]\nname = 'demo'\n")
    train = write("train.py", TRAIN.format(use=use))
    assert bool(findings(cli, train, "--select", "DDP001", "--preview")) is flagged


def test_a_read_in_another_module_counts(cli, write) -> None:
    write("pyproject.toml", "[project]\nname = 'demo'\n")
    write("loop.py", "def run(args, model):\n    return model(args.device)\n")
    train = write("train.py", TRAIN.format(use="print(args.epochs)"))
    assert findings(cli, train, "--select", "DDP001", "--preview")

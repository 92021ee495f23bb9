"""A project helper that saves the state to a file named per save, then the same state
onto the resumed `last` file (`ckpt_epoch_{epoch}.pth`, then `last_checkpoint.pth`): a
torn write of the second leaves the first whole, so DDP014 at the helper's call is
unproven, as it is for the same two saves in the checked file (SimREC)."""

from __future__ import annotations

import pytest
from test_exit_before_rendezvous import project_output

HELPER = """\
import os

import torch


def save_checkpoint(out_dir, epoch, model, optimizer):
    state = {{"epoch": epoch, "model": model.state_dict(), "optimizer": optimizer.state_dict()}}
    {first}
    torch.save(state, os.path.join(out_dir, "last_checkpoint.pth"))
"""

TRAIN = """\
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from ckpt import save_checkpoint


def main(model, loader, out_dir, epochs):
    dist.init_process_group("nccl")
    model = DDP(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    last = os.path.join(out_dir, "last_checkpoint.pth")
    if os.path.exists(last):
        state = torch.load(last, map_location="cpu")
        model.module.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
    for epoch in range(epochs):
        for x in loader:
            model(x).sum().backward()
            optimizer.step()
        if dist.get_rank() == 0:
            save_checkpoint(out_dir, epoch, model.module, optimizer)
"""


@pytest.mark.parametrize(
    ("first", "proven"),
    [
        ('torch.save(state, os.path.join(out_dir, f"ckpt_epoch_{epoch}.pth"))', False),
        ("print(epoch)", True),
    ],
    ids=["backed up", "alone"],
)
def test_a_helper_backing_the_state_up_first(cli, write, first: str, proven: bool) -> None:
    write("ckpt.py", HELPER.format(first=first))
    out = project_output(cli, write, TRAIN, "DDP014")
    assert ("DDP014 `save_checkpoint" in out) is proven

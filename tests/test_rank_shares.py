"""A loop over this rank's share of the work takes items no other rank takes, so a value
built from its variable differs between ranks (`Ranks.depends_on_rank`): files named after
such an item are each rank's own (fourth holdout set, V1: MetaCLIP's shard features and
per-expert predictions)."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from ddplint.api import lint_source
from ddplint.context import FileContext
from ddplint.domain import domain_of

HEADER = """
import os
import torch
import torch.distributed as dist

rank, world = dist.get_rank(), dist.get_world_size()
"""


def _depends(loop: str) -> bool:
    source = HEADER + textwrap.dedent(loop) + "    target = f'{item}.pt'\n"
    ctx = FileContext("t.py", source, cst.parse_module(source))
    loop_node = ctx.module.body[-1]
    assert isinstance(loop_node, cst.For)
    statement = loop_node.body.body[-1]
    assert isinstance(statement, cst.SimpleStatementLine)
    assign = statement.body[0]
    assert isinstance(assign, cst.Assign)
    return domain_of(ctx).ranks.depends_on_rank(assign.value)


@pytest.mark.parametrize(
    "loop",
    [
        "for item in shards[rank::world]:\n",
        "for item in range(first + rank * per_rank, first + (rank + 1) * per_rank):\n",
        "mine = names[rank * 4 : (rank + 1) * 4]\nfor item in mine:\n",
        "ids = [i for i in range(rank * 8, rank * 8 + 8)]\nfor item in ids:\n",
        "for item, path in zip(indices[rank::world], paths[rank::world]):\n",
    ],
)
def test_an_item_of_this_ranks_share_depends_on_the_rank(loop):
    assert _depends(loop)


@pytest.mark.parametrize(
    "loop",
    [
        "for item in shards:\n",
        "for item in range(first, first + per_rank):\n",
        "for item, path in zip(indices, paths):\n",
    ],
)
def test_an_item_every_rank_takes_does_not(loop):
    assert not _depends(loop)


HELPER = """
import torch
import torch.distributed as dist

def dump_predictions(model, checkpoint, idx):
    logits = model(torch.load(checkpoint))
    torch.save({"logits": logits}, f"eval/pred-{idx}.pth")

def main(model, checkpoints):
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    indices = list(range(len(checkpoints)))
    {share}
    for idx, checkpoint in zip(indices, checkpoints):
        dump_predictions(model, checkpoint, idx)
"""


def test_a_helper_given_this_ranks_items_writes_its_own_files():
    shared = "indices, checkpoints = indices[rank::world], checkpoints[rank::world]"
    assert lint_source(HELPER.replace("{share}", shared), select=["DDP013"]) == []
    every = lint_source(HELPER.replace("{share}", "pass"), select=["DDP013"])
    assert [d.start.row for d in every] == [15]

"""`one_rank_guard`: rank tests that deal a loop's iterations out among the ranks are not
one-rank guards (DDP021 relies on it)."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from ddplint.context import FileContext
from ddplint.domain.one_rank_calls import one_rank_guard

HEADER = """
import torch.distributed as dist
rank, world = dist.get_rank(), dist.get_world_size()
"""


def _guarded(body: str) -> bool:
    source = HEADER + textwrap.dedent(body)
    ctx = FileContext("t.py", source, cst.parse_module(source))
    (call,) = [c for c in ctx.calls if ctx.code(c.func) == "forward"]
    return one_rank_guard(ctx, call) is not None


SHARED = {
    "early continue on the share": """
        for i, x in enumerate(items):
            if i % world != rank:
                continue
            forward(x)
    """,
    "each rank in turn": """
        for turn in range(world):
            if rank == turn:
                forward(turn)
    """,
}

ONE_RANK = {
    "rank 0 inside a loop": """
        for i, x in enumerate(items):
            if rank == 0:
                forward(x)
    """,
    "a share test around a rank-0 test": """
        for i, x in enumerate(items):
            if i % world != rank:
                continue
            if rank == 0:
                forward(x)
    """,
    "a rank compared with a value the loop does not set": """
        offset = 3
        for x in items:
            if rank == offset % world:
                forward(x)
    """,
}


@pytest.mark.parametrize("body", SHARED.values(), ids=SHARED.keys())
def test_shared_loops_are_not_one_rank(body: str) -> None:
    assert not _guarded(body)


@pytest.mark.parametrize("body", ONE_RANK.values(), ids=ONE_RANK.keys())
def test_one_rank_guards(body: str) -> None:
    assert _guarded(body)

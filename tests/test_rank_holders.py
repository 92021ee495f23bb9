"""An object made only on some ranks tests where it exists: `writer = SummaryWriter() if
rank == 0 else None` (or `writer = None` then `if rank == 0: writer = ...`) makes `if
writer:` and `if writer is not None:` rank tests of the side that made it
(`Ranks.side`, `Ranks.holder_tests`): "the holder of the writer is worker 0"."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from ddplint.context import FileContext
from ddplint.domain import Side, domain_of

HEADER = """
import torch.distributed as dist
from torch.utils.tensorboard import SummaryWriter

rank = dist.get_rank()
"""


def _side(prelude: str, test: str) -> Side | None:
    source = HEADER + textwrap.dedent(prelude) + f"\nflag = {test}\n"
    ctx = FileContext("t.py", source, cst.parse_module(source))
    statement = ctx.module.body[-1]
    assert isinstance(statement, cst.SimpleStatementLine)
    assign = statement.body[0]
    assert isinstance(assign, cst.Assign)
    return domain_of(ctx).ranks.side(assign.value)


MADE_ON_MAIN = "writer = SummaryWriter('runs') if rank == 0 else None\n"
MADE_ELSEWHERE = "writer = None if rank == 0 else SummaryWriter('runs')\n"
ASSIGNED_ON_MAIN = "writer = None\nif rank == 0:\n    writer = SummaryWriter('runs')\n"


@pytest.mark.parametrize(
    ("prelude", "test", "side"),
    [
        (MADE_ON_MAIN, "writer", Side.MAIN),
        (MADE_ON_MAIN, "writer is not None", Side.MAIN),
        (MADE_ON_MAIN, "writer is None", Side.OTHERS),
        (MADE_ON_MAIN, "not writer", Side.OTHERS),
        (MADE_ELSEWHERE, "writer", Side.OTHERS),
        (ASSIGNED_ON_MAIN, "writer", Side.MAIN),
        (ASSIGNED_ON_MAIN, "writer is not None", Side.MAIN),
    ],
)
def test_an_object_made_on_some_ranks_tests_where_it_exists(
    prelude: str, test: str, side: Side
) -> None:
    assert _side(prelude, test) is side


@pytest.mark.parametrize(
    "prelude",
    [
        "writer = SummaryWriter('runs') if args.tensorboard else None\n",  # a flag, every rank
        "writer = SummaryWriter('runs')\n",  # made on every rank
        "writer = None\nif args.tensorboard:\n    writer = SummaryWriter('runs')\n",
        "writer = [] if rank == 0 else None\n",  # a literal may test false
    ],
)
def test_an_object_made_alike_on_every_rank_tests_no_rank(prelude: str) -> None:
    assert _side(prelude, "writer is not None") is None
    assert _side(prelude, "writer") is None

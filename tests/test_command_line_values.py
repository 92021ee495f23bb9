"""ddplint.domain.command_line: options of `parse_args()` the file never assigns are the
same on every rank; anything else is not known to be."""

from __future__ import annotations

import libcst as cst
import pytest

from ddplint.context import FileContext
from ddplint.domain.command_line import same_on_every_rank

SCRIPT = """\
import argparse
import torch.distributed as dist

def get_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--resume", default="")
    parser.add_argument("--steps", type=int, default=10)
    return parser.parse_args()

def main(cfg):
    args = get_args()
    opts, _ = argparse.ArgumentParser().parse_known_args()
    args.gpu = dist.get_rank()
    rank = dist.get_rank()
    if {test}:
        pass
"""


def _test_of(test: str) -> tuple[FileContext, cst.BaseExpression, cst.CSTNode]:
    source = SCRIPT.format(test=test)
    ctx = FileContext("train.py", source, cst.parse_module(source))
    node = next(n for n in ctx.nodes_of(cst.If) if isinstance(n, cst.If))
    return ctx, node.test, node


@pytest.mark.parametrize(
    "test", ["args.resume", "args.steps > 0", "not args.resume and args.steps == 3", "True"]
)
def test_options_the_file_never_assigns_are_the_same_on_every_rank(test: str) -> None:
    ctx, expr, at = _test_of(test)
    assert same_on_every_rank(ctx, expr, at)


@pytest.mark.parametrize("test", ["args.gpu == 0", "rank == 0", "cfg.resume", "args.steps > rank"])
def test_assigned_options_ranks_and_parameters_are_not_known_to_be(test: str) -> None:
    ctx, expr, at = _test_of(test)
    assert not same_on_every_rank(ctx, expr, at)

"""Distributed mode decided by the number of visible GPUs: `if torch.cuda.device_count() >
1:` around the code that starts the process group or wraps the model in DDP."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain.apis import DDP_CLASSES, PROCESS_CLASSES, SPAWN_FUNCTIONS
from ddplint.domain.call_reach import functions_reached
from ddplint.domain.ranks import int_literal

_INIT = "torch.distributed.init_process_group"
# `count > 1`, `count >= 2`, `count != 1`, and the same read from the right.
_MORE_THAN_ONE = frozenset({("GreaterThan", 1), ("GreaterThanEqual", 2), ("NotEqual", 1)})
_MIRRORED = {"LessThan": "GreaterThan", "LessThanEqual": "GreaterThanEqual"}


def count_gated_starts(
    ctx: FileContext, is_count: Callable[[cst.BaseExpression, cst.CSTNode], bool]
) -> Iterator[tuple[cst.If, str]]:
    """(`if` statement, what its branch starts) where the test is only a comparison of
    the device count with 1 (`is_count` decides what holds the count) and the branch
    starts the process group or builds DDP, directly or through a function of this file
    it calls, and does not start the processes itself (`mp.spawn`: the script is its own
    launcher, sized by the count)."""
    for node in ctx.nodes_of(cst.If):
        assert type(node) is cst.If
        if not _more_than_one(node.test, is_count):
            continue
        calls = _calls_run(ctx, node.body)
        names = {ctx.call_name(call) for call in calls}
        if names & (SPAWN_FUNCTIONS | PROCESS_CLASSES):
            continue
        if _INIT in names:
            yield node, "`init_process_group`"
        elif names & DDP_CLASSES:
            yield node, "the DDP wrap"


def _more_than_one(
    test: cst.BaseExpression, is_count: Callable[[cst.BaseExpression, cst.CSTNode], bool]
) -> bool:
    """`test` is only the device count compared with 1, true when it is more than one."""
    if type(test) is not cst.Comparison or len(test.comparisons) != 1:
        return False
    target = test.comparisons[0]
    operator, left, right = type(target.operator).__name__, test.left, target.comparator
    if int_literal(left) is not None:  # `1 < n`
        operator = _MIRRORED.get(operator, operator)
        left, right = right, left
    number = int_literal(right)
    return (operator, number) in _MORE_THAN_ONE and is_count(left, test)


def _calls_run(ctx: FileContext, block: cst.BaseSuite) -> list[cst.Call]:
    """The calls in `block` and in the functions of this file they run, two calls deep
    (`if n > 1: launch(args)` with `launch` calling `setup()`)."""
    found = list(ctx.calls_within(block))
    for func in functions_reached(ctx, block, depth=2):
        found.extend(ctx.calls_within(func))
    return found

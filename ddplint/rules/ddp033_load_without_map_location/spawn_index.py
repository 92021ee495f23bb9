"""Loads that a spawned worker never reaches: under a test that its process index is None
(`if args.gpu is None:` after `args.gpu = gpu`, the pytorch/examples resume). `mp.spawn`
passes every worker an int index, so only a direct call of the worker, the one process the
script starts itself, takes that branch."""

from __future__ import annotations

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain.spawned_workers import index_parameter


def only_without_index(ctx: FileContext, node: cst.CSTNode) -> bool:
    """`node` runs only where the spawned worker's index, or what it was copied into, is
    None: never in a worker `mp.spawn` started."""
    func = ctx.enclosing_function(node)
    index = index_parameter(ctx, func) if func is not None else None
    if func is None or index is None:
        return False
    copies = {index} | _copies(ctx, func, index, node)
    for condition in ctx.flow.conditions(node):
        for term, value in condition.terms():
            tested = _none_tested(term)
            if tested is not None and value == tested[1] and ctx.code(tested[0]).strip() in copies:
                return True
    return False


def _copies(ctx: FileContext, func: cst.FunctionDef, index: str, before: cst.CSTNode) -> set[str]:
    """What the index is copied into in `func` before `before` (`args.gpu = gpu`)."""
    found = set()
    for assign in ctx.nodes_within(func, cst.Assign):
        assert type(assign) is cst.Assign
        if (
            type(assign.value) is cst.Name
            and assign.value.value == index
            and ctx.scope(assign) is func
            and ctx.before(assign, before)
        ):
            found |= {ctx.code(t.target).strip() for t in assign.targets}
    return found


def _none_tested(test: cst.BaseExpression) -> tuple[cst.BaseExpression, bool] | None:
    """`(x, True)` for `x is None`, `(x, False)` for `x is not None`: the expression and
    the value of the test where it is None."""
    if type(test) is not cst.Comparison or len(test.comparisons) != 1:
        return None
    target = test.comparisons[0]
    if not (type(target.comparator) is cst.Name and target.comparator.value == "None"):
        return None
    if type(target.operator) is cst.Is:
        return test.left, True
    if type(target.operator) is cst.IsNot:
        return test.left, False
    return None

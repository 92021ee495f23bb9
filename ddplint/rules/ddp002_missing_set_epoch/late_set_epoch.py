"""`set_epoch(epoch)` called after the pass it should order, or inside it (once the
loader's iterator has drawn the pass's order): the pass reads the epoch the pass before it
set, so the first two passes share one order."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

from ddplint.context import FileContext, Scope
from ddplint.engine.resolve import argument
from ddplint.names import dotted
from ddplint.rules.ddp002_missing_set_epoch.epoch_loops import EpochLoops


@dataclass(frozen=True)
class LateSetEpoch:
    """An epoch loop whose body reads the loader in one top-level statement and calls
    `set_epoch` with the loop variable (`call`) in a later one, or inside the pass over
    the loader (`inside`), with no `set_epoch` before the read."""

    loop: cst.For
    call: cst.Call
    inside: bool = False


def late_set_epochs(
    ctx: FileContext, finder: EpochLoops, name: str, scope: Scope, receivers: frozenset[str]
) -> Iterator[LateSetEpoch]:
    """Epoch loops iterating the loader `name` (seen from `scope`) that call
    `<receiver>.set_epoch(<loop variable>)` only after their pass over it, where
    `receivers` names the sampler (`sampler`, `loader.sampler`), and nothing else in the
    file sets that sampler's epoch."""
    for epoch, site in finder.epoch_loops(name, scope):
        if epoch is None or type(epoch.loop) is not cst.For:
            continue
        loop = epoch.loop
        if type(loop.target) is not cst.Name or type(loop.body) is not cst.IndentedBlock:
            continue
        statements = list(loop.body.body)
        read = _top_statement(ctx, statements, site)
        if read is None:
            continue
        before = statements[: statements.index(read)]
        if any(finder.loop_sets_epoch(s) for s in before):
            continue  # the pass is ordered before it runs
        inside = _set_inside_pass(ctx, read, site, receivers, loop.target.value)
        if inside is None and finder.loop_sets_epoch(read):
            continue  # set in the reading statement, not within the pass
        if _set_elsewhere(ctx, receivers, loop):
            continue  # the epoch the first pass reads is not 0
        if inside is not None:
            yield LateSetEpoch(loop, inside, inside=True)
            continue
        for statement in statements[statements.index(read) + 1 :]:
            call = _set_epoch_of(statement, receivers, loop.target.value)
            if call is not None:
                yield LateSetEpoch(loop, call)
                break


def _set_inside_pass(
    ctx: FileContext,
    read: cst.BaseStatement,
    site: cst.CSTNode,
    receivers: frozenset[str],
    variable: str,
) -> cst.Call | None:
    """`<receiver>.set_epoch(<variable>)` in the body of the `for` (within `read`) that
    iterates the loader at `site`, and no other `set_epoch` in `read`: it runs once the
    pass's iterator has drawn its order (a DataLoader asks its sampler for the order when
    the `for` starts)."""
    passes = [
        node
        for node in (site, *ctx.ancestors(site))
        if type(node) is cst.For and (node is site or ctx.is_inside(site, node.iter))
    ]
    inner = next((p for p in passes if p is read or ctx.is_inside(p, read)), None)
    if inner is None:
        return None
    found = None
    for call in ctx.calls_within(read):
        if not (type(call.func) is cst.Attribute and call.func.attr.value == "set_epoch"):
            continue
        if not ctx.is_inside(call, inner.body) or found is not None:
            return None  # set before the pass too, or more than once
        if not (type(ctx.parent(call)) is cst.Expr and _sets_to(call, receivers, variable)):
            return None
        found = call
    return found


def _set_elsewhere(ctx: FileContext, receivers: frozenset[str], loop: cst.For) -> bool:
    """A `set_epoch` on the sampler runs outside `loop` (an earlier stage advanced it)."""
    return any(
        type(call.func) is cst.Attribute
        and call.func.attr.value == "set_epoch"
        and dotted(call.func.value) in receivers
        and not ctx.is_inside(call, loop)
        for call in ctx.model.calls_by_name.get("set_epoch", ())
    )


def _top_statement(
    ctx: FileContext, statements: list[cst.BaseStatement], node: cst.CSTNode
) -> cst.BaseStatement | None:
    """The statement of `statements` that holds `node`."""
    for statement in statements:
        if statement is node or ctx.is_inside(node, statement):
            return statement
    return None


def _set_epoch_of(
    statement: cst.BaseStatement, receivers: frozenset[str], variable: str
) -> cst.Call | None:
    """`statement` is `<receiver>.set_epoch(<variable>)` as it stands (not `variable + 1`,
    which orders the next pass right)."""
    if type(statement) is not cst.SimpleStatementLine or len(statement.body) != 1:
        return None
    expr = statement.body[0]
    call = expr.value if type(expr) is cst.Expr else None
    return call if type(call) is cst.Call and _sets_to(call, receivers, variable) else None


def _sets_to(call: cst.Call, receivers: frozenset[str], variable: str) -> bool:
    """`call` is `<receiver>.set_epoch(<variable>)`."""
    if type(call.func) is not cst.Attribute or call.func.attr.value != "set_epoch":
        return False
    value = argument(call, 0, "epoch")
    return (
        dotted(call.func.value) in receivers
        and len(call.args) == 1
        and type(value) is cst.Name
        and value.value == variable
    )


def first_epoch(ctx: FileContext, loop: cst.For) -> int | None:
    """The loop variable's first value when the loop is `range(n)` or `range(start, n)`
    with a start the resolver pins to one integer; None otherwise."""
    iterable = loop.iter
    if not (
        type(iterable) is cst.Call
        and type(iterable.func) is cst.Name
        and iterable.func.value == "range"
        and "range" not in ctx.functions
        and 1 <= len(iterable.args) <= 3
        and not any(arg.star or arg.keyword for arg in iterable.args)
    ):
        return None
    if len(iterable.args) == 1:
        return 0
    values = [v.expr for v in ctx.resolver.values(iterable.args[0].value, loop) if v.leaf]
    if not values or not all(type(v) is cst.Integer for v in values):
        return None
    starts = {int(v.value, 0) for v in values if type(v) is cst.Integer}
    return starts.pop() if len(starts) == 1 else None

"""Exits from a training loop (`break`, `return`) decided on a value counted over one
rank's shard and never combined across ranks: the evaluation counts of
`ddplint.domain.shard_metrics`, what the evaluation functions return, and per-rank
counters (`patience += 1`) updated under a branch decided on such a value."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain import domain_of
from ddplint.domain.shard_metrics import (
    combines_call,
    counted,
    evaluation_shard_loops,
    metered,
    returned_by,
    returned_counts,
)
from ddplint.engine.resolve import Value
from ddplint.names import dotted

Loop = cst.For | cst.While


@dataclass
class Decision:
    """A `break`/`return` leaving `loop` (a training loop) on the rank-local `value`."""

    exit: cst.Break | cst.Return
    loop: Loop
    value: str
    test: cst.BaseExpression


class ShardValues:
    """Whether an expression is computed from a shard count nothing combined."""

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        self.counts: list[cst.AugAssign] = []
        self.meters: list[str] = []
        self.functions: set[str] = set()
        for shard in evaluation_shard_loops(ctx):
            self.counts.extend(shard.counts)
            self.meters.extend(shard.meters)
            if returned_counts(ctx, shard, shard.counts) and type(shard.frame) is cst.FunctionDef:
                self.functions.add(shard.frame.name.value)

    def __bool__(self) -> bool:
        return bool(self.counts or self.meters or self.functions)

    def per_rank(self, expr: cst.BaseExpression, at: cst.CSTNode) -> str | None:
        """What shard value `expr` is computed from (a count's name, `f()`), when no
        combining call (a collective, `reduce_tensor`, ...) is on the way; else None."""
        ctx = self.ctx
        sources = ctx.resolver.sources(expr, at, depth=3)
        if any(type(v.expr) is cst.Call and combines_call(ctx, v.expr) for v in sources):
            return None
        if self._reduced_in_place(sources, at):
            return None
        count = counted(ctx, expr, at, self.counts) or metered(ctx, expr, at, self.meters)
        if count is not None:
            return f"`{count}`"
        called = returned_by(ctx, expr, at) & self.functions
        return f"what `{sorted(called)[0]}()` returns" if called else None

    def _reduced_in_place(self, sources: list[Value], at: cst.CSTNode) -> bool:
        """A name the value comes from is handed to a combining call in the function
        (`dist.all_reduce(t)`, `dist.broadcast(stop, 0)`)."""
        names = {v.expr.value for v in sources if type(v.expr) is cst.Name}
        return any(self.handed_to_combining_call(name, at) for name in names)

    def handed_to_combining_call(self, name: str, at: cst.CSTNode) -> bool:
        """`name` is an argument of a combining call in the function of `at`."""
        ctx = self.ctx
        names = {name}
        frame = ctx.model.frame(at)
        for call in ctx.model.calls_by_frame(frame):
            if combines_call(ctx, call) and any(
                type(n) is cst.Name and n.value in names
                for arg in call.args
                for n in ctx.walk(arg.value)
            ):
                return True
        return False


def rank_local_exits(ctx: FileContext) -> Iterator[Decision]:
    """`break`/`return` statements leaving a training loop under a condition decided on a
    shard value (directly, or through a counter updated under such a condition)."""
    values = ShardValues(ctx)
    if not values:
        return
    loops = domain_of(ctx).loops
    for node in ctx.nodes_of(cst.Break, cst.Return):
        assert isinstance(node, (cst.Break, cst.Return))
        loop = _left_loop(ctx, node)
        if loop is None or not loops.is_training_loop(loop):
            continue
        for condition in ctx.flow.conditions(node):
            found = (
                values.per_rank(condition.test, condition.gate)
                or _counter(ctx, values, condition.test, condition.gate)
                or _fed_state(ctx, values, condition.test, condition.gate)
            )
            if found is not None:
                yield Decision(node, loop, found, condition.test)
                break


def _left_loop(ctx: FileContext, node: cst.Break | cst.Return) -> Loop | None:
    """The loop a `break` leaves; for a `return`, the outermost loop around it in its
    function."""
    inner = ctx.enclosing_loop(node)
    if type(node) is cst.Break or inner is None:
        return inner
    outer: Loop = inner
    for ancestor in ctx.ancestors(inner):
        if isinstance(ancestor, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            break
        if isinstance(ancestor, (cst.For, cst.While)):
            outer = ancestor
    return outer


def _counter(
    ctx: FileContext, values: ShardValues, test: cst.BaseExpression, at: cst.CSTNode
) -> str | None:
    """A name in `test` bound under a condition decided on a shard value (`patience += 1`
    in the `else` of `if val_loss < best:`)."""
    for node in ctx.walk(test):
        if type(node) is not cst.Name:
            continue
        if values.handed_to_combining_call(node.value, at):
            continue  # `dist.broadcast(bad, 0)`: every rank holds rank 0's counter
        for binding in ctx.resolver.reaching(node.value, at):
            for condition in ctx.flow.conditions(binding.statement):
                found = values.per_rank(condition.test, condition.gate)
                if found is not None:
                    return f"`{node.value}` (counted on {found})"
    return None


def _fed_state(
    ctx: FileContext, values: ShardValues, test: cst.BaseExpression, at: cst.CSTNode
) -> str | None:
    """An attribute in `test` of an object that was handed a shard value earlier in the
    same function (`early_stopping(val_loss)` or `stopper.step(val_loss)`, then `if
    early_stopping.early_stop:`): the object keeps its own per-rank state, decided on
    what it was fed. Not where the object is handed to a combining call."""
    frame = ctx.model.frame(at)
    for node in ctx.walk(test):
        if type(node) is not cst.Attribute:
            continue
        holder = dotted(node.value)
        if holder is None or holder == "self" or values.handed_to_combining_call(holder, at):
            continue
        for call in ctx.model.calls_by_frame(frame):
            func = call.func
            fed = dotted(func) == holder or (
                type(func) is cst.Attribute and dotted(func.value) == holder
            )
            if not fed or not ctx.before(call, at):
                continue
            for arg in call.args:
                found = values.per_rank(arg.value, call)
                if found is not None:
                    return f"{found} (handed to `{holder}` first)"
    return None

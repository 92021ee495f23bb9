"""Where a value counted over one rank's shard is used as the result: compared, given to
a scheduler's `step()`, or logged; in the evaluation function after its loop, or in the
callers of this file it returns the value to."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

from ddplint.context import FileContext, Scope
from ddplint.domain import domain_of
from ddplint.domain.runners import one_process
from ddplint.domain.shard_metrics import (
    ShardLoop,
    callers,
    collected_from,
    combines,
    counted,
    division,
    evaluation_shard_loops,
    metered,
    returned_counts,
    whole_dataset,
)
from ddplint.names import dotted

# Methods that log what they are given (`logger.info`, `writer.add_scalar`, `wandb.log`).
_LOGGERS = frozenset(
    {"info", "warning", "debug", "log", "add_scalar", "add_scalars", "log_metrics", "log_dict"}
)


# Modules whose `log` is a logarithm.
_NOT_LOGGERS = frozenset({"math", "numpy", "torch", "scipy", "jax"})


@dataclass
class MetricUse:
    """A use of a shard count: the node, what it does with it, the count's name, and the
    evaluation function that returned it (when used by a caller)."""

    node: cst.CSTNode
    kind: str  # "compare", "scheduler" or "log"
    count: str
    via: str | None = None
    collected: bool = False  # a list of the shard's results, not a running count


def shard_metric_uses(ctx: FileContext) -> Iterator[MetricUse]:
    """Uses of the counts of every evaluation loop over a sharded loader."""
    for shard in evaluation_shard_loops(ctx):
        loop = shard.loop
        counts = [c for c in shard.counts if not _divided_by_whole_dataset(ctx, shard, c)]
        if not counts and not shard.meters and not shard.collected:
            continue
        for node, kind, expr in _uses(ctx, shard.frame, loop):
            count = counted(ctx, expr, node, counts) or metered(ctx, expr, node, shard.meters)
            if count is not None:
                yield MetricUse(node, kind, count)
                continue
            results = collected_from(ctx, expr, node, shard.collected)
            if results is not None:
                yield MetricUse(node, kind, results, collected=True)
        yield from _caller_uses(ctx, shard, counts)


def _caller_uses(
    ctx: FileContext, shard: ShardLoop, counts: list[cst.AugAssign]
) -> Iterator[MetricUse]:
    """Uses in the callers of this file of what the evaluation function returns, when it
    returns a count and no caller combines values."""
    func = shard.frame
    returned = returned_counts(ctx, shard, counts)
    if not returned or not isinstance(func, cst.FunctionDef):
        return
    sites = callers(ctx, func)
    if any(combines(ctx, ctx.scope(site)) for site in sites):
        return
    for site in sites:
        if one_process(ctx, site):
            continue  # not distributed there: its loader reads the whole set
        frame = ctx.scope(site)
        for node, kind, expr in _uses(ctx, frame, site):
            if _returned_in_job(ctx, func, expr, node):
                yield MetricUse(node, kind, returned[0], via=func.name.value)


def _returned_in_job(
    ctx: FileContext, func: cst.FunctionDef, expr: cst.BaseExpression, at: cst.CSTNode
) -> bool:
    """`expr` is computed from a call of `func` that may run in the distributed job: a
    value bound only where one process runs (`if args.local_rank == -1: results =
    evaluate(...)`) was counted over the whole evaluation set."""
    return any(
        isinstance(value.expr, cst.Call)
        and func in ctx.resolver.callees(value.expr)
        and not one_process(ctx, value.expr)
        for value in ctx.resolver.sources(expr, at, depth=3)
    )


def _uses(
    ctx: FileContext, frame: Scope, after: cst.CSTNode
) -> Iterator[tuple[cst.CSTNode, str, cst.BaseExpression]]:
    """(node, kind, operand) for each comparison, scheduler step and logging call of
    `frame` that comes after `after` (or holds it) and is not inside it."""
    for node in ctx.nodes_within(frame, cst.Comparison, cst.Call):
        if ctx.scope(node) is not frame or ctx.is_inside(node, after):
            continue
        if not (ctx.before(after, node) or ctx.is_inside(after, node)):
            continue
        if isinstance(node, cst.Comparison):
            if _ranks_values(node) and _decides(ctx, node):
                yield node, "compare", node.left
                for target in node.comparisons:
                    yield node, "compare", target.comparator
        elif isinstance(node, cst.Call):
            kind = _call_kind(ctx, node)
            if kind is None or (kind == "log" and _names_the_rank(ctx, node)):
                continue
            for arg in node.args:
                yield node, kind, arg.value


def _names_the_rank(ctx: FileContext, call: cst.Call) -> bool:
    """The logging call prints the rank too (`print(f"rank {rank}: acc {acc}")`): the
    value is shown as that rank's own."""
    ranks = domain_of(ctx).ranks
    return any(
        isinstance(node, (cst.Name, cst.Attribute, cst.Call)) and ranks.is_rank_value(node, call)
        for arg in call.args
        for node in ctx.walk(arg.value)
    )


def _decides(ctx: FileContext, comparison: cst.Comparison) -> bool:
    """The comparison's truth is a decision: the test of an `if`, `while` or conditional
    expression (also through `and` / `or` / `not`), or a flag stored or returned
    (`is_best = acc > best`); not a per-element computation inside a larger expression
    (`(np.array(ious) > 0.5).sum()`, `np.mean(scores > threshold)`)."""
    node: cst.CSTNode = comparison
    parent = ctx.parent(node)
    while isinstance(parent, (cst.BooleanOperation, cst.UnaryOperation)):
        node, parent = parent, ctx.parent(parent)
    if isinstance(parent, cst.While):
        return parent.test is node
    if isinstance(parent, cst.If):
        return parent.test is node and _acts(ctx, parent)
    if isinstance(parent, cst.IfExp):
        return parent.test is node
    return isinstance(parent, (cst.Assign, cst.AnnAssign, cst.Return, cst.Assert))


def _acts(ctx: FileContext, branch: cst.If) -> bool:
    """The `if` does something with the comparison's outcome: leaves a loop or the
    function, raises, or calls something that is not logging (a save, a scheduler), not
    only `best = loss` and a print (that tracks a number for the log)."""
    for node in ctx.walk(branch.body):
        if isinstance(node, (cst.Break, cst.Continue, cst.Return, cst.Raise)):
            return True
        if isinstance(node, cst.Call) and _call_kind(ctx, node) != "log":
            return True
    return branch.orelse is not None


def _ranks_values(comparison: cst.Comparison) -> bool:
    """An ordering comparison (`loss < best`, `acc >= target`), not a guard against an
    empty count (`total > 0`) or an identity test."""
    ordering = (cst.LessThan, cst.GreaterThan, cst.LessThanEqual, cst.GreaterThanEqual)
    operands = [comparison.left, *(t.comparator for t in comparison.comparisons)]
    if any(isinstance(o, cst.Integer) and int(o.value, 0) == 0 for o in operands):
        return False
    return all(isinstance(t.operator, ordering) for t in comparison.comparisons)


def _call_kind(ctx: FileContext, call: cst.Call) -> str | None:
    func = call.func
    if isinstance(func, cst.Name):
        return "log" if func.value == "print" and "print" not in ctx.functions else None
    if not isinstance(func, cst.Attribute):
        return None
    method = func.attr.value
    if (ctx.call_name(call) or "").partition(".")[0] in _NOT_LOGGERS:
        return None  # `math.log(x)`, `torch.log(t)`
    if method == "step" and call.args:
        receiver = (dotted(func.value) or "").rpartition(".")[2].lower()
        return "scheduler" if "sched" in receiver or "plateau" in receiver else None
    return "log" if method in _LOGGERS else None


def _divided_by_whole_dataset(ctx: FileContext, shard: ShardLoop, count: cst.AugAssign) -> bool:
    """The count is divided by the size of the whole dataset (DDP028 reports that)."""
    for node in ctx.nodes_within(shard.frame, cst.BinaryOperation, cst.AugAssign):
        parts = division(node)
        if parts is None or ctx.scope(node) is not shard.frame:
            continue
        numerator, denominator = parts
        if counted(ctx, numerator, node, [count]) is not None and whole_dataset(
            ctx, denominator, node, shard.loaders
        ):
            return True
    return False

"""Where a value counted over one rank's shard is used as the result: compared, given to
a scheduler's `step()`, or logged; in the evaluation function after its loop, or in the
callers of this file it returns the value to."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

from ddplint.context import FileContext, Scope
from ddplint.domain import domain_of
from ddplint.domain.combined_values import Combined, combined_values
from ddplint.domain.ddp_facts import string_key
from ddplint.domain.runners import one_process, one_rank
from ddplint.domain.shard_metrics import (
    ShardLoop,
    collected_from,
    combines_call,
    counted,
    division,
    evaluation_shard_loops,
    metered,
    returned_counts,
    whole_dataset,
)
from ddplint.engine.resolve import Value
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
    alone: bool = False  # only some ranks evaluate (`if rank == 0:`): each over its shard


def shard_metric_uses(ctx: FileContext) -> Iterator[MetricUse]:
    """Uses of the counts of every evaluation loop over a sharded loader."""
    for shard in evaluation_shard_loops(ctx):
        loop = shard.loop
        counts = [c for c in shard.counts if not _divided_by_whole_dataset(ctx, shard, c)]
        if not counts and not shard.meters and not shard.collected:
            continue
        alone = one_rank(ctx, loop) is True
        for node, kind, expr in _uses(ctx, shard.frame, loop):
            if _reads_combined_count(ctx, shard, expr, node):
                continue  # `test_loss / count`, `test_loss` summing all-reduced values
            count = counted(ctx, expr, node, counts) or metered(ctx, expr, node, shard.meters)
            if count is not None:
                yield MetricUse(node, kind, count, alone=alone)
                continue
            results = collected_from(ctx, expr, node, shard.collected)
            if results is not None:
                yield MetricUse(node, kind, results, collected=True, alone=alone)
        yield from _caller_uses(ctx, shard, counts, alone)


def _caller_uses(
    ctx: FileContext, shard: ShardLoop, counts: list[cst.AugAssign], alone: bool
) -> Iterator[MetricUse]:
    """Uses in the callers of this file of what the evaluation function returns, when it
    returns a count and no caller combines values."""
    func = shard.frame
    returned = returned_counts(ctx, shard, counts)
    if not returned or type(func) is not cst.FunctionDef:
        return
    for site in ctx.resolver.calls_of(func):
        if one_process(ctx, site):
            continue  # not distributed there: its loader reads the whole set
        frame = ctx.scope(site)
        combined = combined_values(ctx, frame, combines_call, trusted=func)
        if combined is None:
            continue  # the caller combines something out of sight
        for node, kind, expr in _uses(ctx, frame, site):
            if _combined_use(ctx, node, expr, combined):
                continue
            count = _returned_in_job(ctx, func, expr, node, returned)
            if count is not None:
                collected = count in _names_bound(shard.collected)
                yield MetricUse(node, kind, count, func.name.value, collected, alone)


def _reads_combined_count(
    ctx: FileContext, shard: ShardLoop, expr: cst.BaseExpression, at: cst.CSTNode
) -> bool:
    """`expr` is computed from a count of the loop that sums combined values."""
    if not shard.combined:
        return False
    names = set(ctx.names_in(expr))
    names.update(
        v.expr.value for v in ctx.resolver.sources(expr, at, depth=3) if type(v.expr) is cst.Name
    )
    return bool(shard.combined & names)


def _names_bound(statements: list[cst.Assign]) -> set[str]:
    return {t.target.value for a in statements for t in a.targets if type(t.target) is cst.Name}


def _combined_use(
    ctx: FileContext, node: cst.CSTNode, expr: cst.BaseExpression, combined: Combined
) -> bool:
    """The use reads a combined value, or it is the test of an `if` whose branches set a
    value that is then combined (`if val_loss < best: ... else: bad_epochs += 1`, and
    `bad_epochs` goes to a vote of the ranks): what the comparison decides is agreed."""
    if combined.holds(ctx.names_in(expr)):
        return True
    branch = ctx.parent(node)
    if not (type(branch) is cst.If and branch.test is node):
        return False
    set_there = {
        name
        for target in ctx.nodes_within(branch, cst.AssignTarget, cst.AugAssign)
        if isinstance(target, (cst.AssignTarget, cst.AugAssign))
        for name in ctx.names_in(target.target)
    }
    return combined.holds(set_there)


def _returned_in_job(
    ctx: FileContext,
    func: cst.FunctionDef,
    expr: cst.BaseExpression,
    at: cst.CSTNode,
    counts: list[str],
) -> str | None:
    """The count of `func` that `expr` is computed from, through a call of `func` that
    may run in the distributed job (a value bound only where one process runs, `if
    args.local_rank == -1: results = evaluate(...)`, was counted over the whole
    evaluation set), or None. Followed into what `func` returns, the read must be
    certainly of a count (`val_loss, val_f1 = evaluate(...)` with `return total_loss / n,
    f1`: `val_loss` only; `val_metrics[name]` may be any entry of a returned dict)."""
    reads = [[v for v in values if ctx.is_inside(v.expr, func)] for values in _reads(ctx, expr, at)]
    if any(reads):
        for inside in reads:
            named = [_count_of(ctx, v, counts) for v in inside]
            if named and None not in named:
                return named[0]
        return None
    called = any(
        type(value.expr) is cst.Call
        and func in ctx.resolver.callees(value.expr)
        and not one_process(ctx, value.expr)
        for value in ctx.resolver.sources(expr, at, depth=3)
    )
    return counts[0] if called and _returns_only_counts(ctx, func, set(counts)) else None


def _count_of(ctx: FileContext, value: Value, counts: list[str]) -> str | None:
    """The count `value` is computed from, or whose starting value it is (`correct = 0`
    before the loop that adds to it: the value returned is what the loop summed)."""
    names = set(ctx.names_in(value.expr))
    at = value.at
    if type(at) is cst.Assign:
        names.update(t.target.value for t in at.targets if type(t.target) is cst.Name)
    return next((count for count in counts if count in names), None)


def _returns_only_counts(ctx: FileContext, func: cst.FunctionDef, counts: set[str]) -> bool:
    """Every value `func` returns is computed from its counts, whole (`return correct /
    total`), not one entry of several (`return {"loss": total_loss / n, "f1": f1}`, of
    which a caller may read any)."""
    returns = ctx.model.returns.get(func, [])
    return bool(returns) and all(
        r.value is not None
        and not isinstance(r.value, (cst.Tuple, cst.List, cst.Dict))
        and all(
            not isinstance(v.expr, (cst.Tuple, cst.List, cst.Dict))
            and counts & set(ctx.names_in(v.expr))
            for v in ctx.resolver.values(r.value, r)
            if v.leaf
        )
        for r in returns
    )


def _reads(ctx: FileContext, expr: cst.BaseExpression, at: cst.CSTNode) -> list[list[Value]]:
    """For each name and string-keyed item `expr` reads (`val_metrics["acc"]` in
    `f"{val_metrics['acc']:.3f}"`: the dict entry `"acc"` of what was returned), its
    values."""
    found: list[list[Value]] = []
    for node in ctx.walk(expr):
        keyed = type(node) is cst.Subscript and string_key(node) is not None
        named = type(node) is cst.Name and type(ctx.parent(node)) is not cst.Subscript
        if isinstance(node, cst.BaseExpression) and (keyed or named):
            found.append([v for v in ctx.resolver.values(node, at) if v.leaf])
    return found


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
        if type(node) is cst.Comparison:
            if _ranks_values(node) and _decides(ctx, node):
                yield node, "compare", node.left
                for target in node.comparisons:
                    yield node, "compare", target.comparator
        elif type(node) is cst.Call:
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
    if type(parent) is cst.While:
        return parent.test is node
    if type(parent) is cst.If:
        return parent.test is node and _acts(ctx, parent)
    if type(parent) is cst.IfExp:
        return parent.test is node
    return isinstance(parent, (cst.Assign, cst.AnnAssign, cst.Return, cst.Assert))


def _acts(ctx: FileContext, branch: cst.If) -> bool:
    """The `if` does something with the comparison's outcome: leaves a loop or the
    function, raises, or calls something that is not logging (a save, a scheduler), not
    only `best = loss` and a print (that tracks a number for the log)."""
    for node in ctx.walk(branch.body):
        if isinstance(node, (cst.Break, cst.Continue, cst.Return, cst.Raise)):
            return True
        if type(node) is cst.Call and _call_kind(ctx, node) != "log":
            return True
    return branch.orelse is not None


def _ranks_values(comparison: cst.Comparison) -> bool:
    """An ordering comparison (`loss < best`, `acc >= target`), not a guard against an
    empty count (`total > 0`) or an identity test."""
    ordering = (cst.LessThan, cst.GreaterThan, cst.LessThanEqual, cst.GreaterThanEqual)
    operands = [comparison.left, *(t.comparator for t in comparison.comparisons)]
    if any(type(o) is cst.Integer and int(o.value, 0) == 0 for o in operands):
        return False
    return all(isinstance(t.operator, ordering) for t in comparison.comparisons)


def _call_kind(ctx: FileContext, call: cst.Call) -> str | None:
    func = call.func
    if type(func) is cst.Name:
        return "log" if func.value == "print" and "print" not in ctx.functions else None
    if type(func) is not cst.Attribute:
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
            ctx, denominator, node, shard.loaders, shard.parameter
        ):
            return True
    return False

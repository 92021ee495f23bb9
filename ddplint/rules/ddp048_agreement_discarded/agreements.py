"""Agreements whose result is dropped: a call, made as a statement, of a function of this
file that combines values across ranks through a collective and returns the combined
result, handed names it does not reduce in place; and the loop exits that then test
those names, each rank on its own value."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain import domain_of


@dataclass(frozen=True)
class DroppedAgreement:
    """`call` (a statement) agrees `names` across ranks and its result is dropped; `exit`
    leaves the loop holding the call on a test of one of them."""

    call: cst.Call
    names: frozenset[str]
    exit: cst.Break | cst.Return
    test: cst.BaseExpression


def dropped_agreements(ctx: FileContext) -> Iterator[DroppedAgreement]:
    collectives = domain_of(ctx).collectives
    for statement in ctx.nodes_of(cst.Expr):
        assert type(statement) is cst.Expr
        call = statement.value
        if type(call) is not cst.Call or collectives.is_collective(call):
            continue
        loop = ctx.enclosing_loop(call)
        if loop is None or not collectives.surely_issues(call):
            continue
        if any(
            type(c.gate) is not cst.While and not domain_of(ctx).ranks.is_mode_check(c.test)
            for c in ctx.flow.conditions(call)
        ):
            continue  # the other ranks' next pass may not reach it
        names = frozenset(
            n for n in _agreed_names(ctx, call) if _decided_in_pass(ctx, n, call, loop)
        )
        if names:
            yield from _exits_on(ctx, call, loop, names)


def _agreed_names(ctx: FileContext, call: cst.Call) -> frozenset[str]:
    """Names handed to `call` whose callee (a function of this file) returns a value and
    never hands the matching parameter itself to a collective (no in-place reduction)."""
    found: set[str] = set()
    for func in ctx.resolver.callees(call):
        if ctx.model.enclosing_class(func) is not None or not _returns_value(ctx, func):
            continue
        params = func.params.params
        for position, arg in enumerate(call.args):
            if type(arg.value) is not cst.Name or arg.star:
                continue
            if arg.keyword is not None:
                param = next((p for p in params if p.name.value == arg.keyword.value), None)
            else:
                param = params[position] if position < len(params) else None
            if param is not None and not _reduced_in_place(ctx, func, param.name.value):
                found.add(arg.value.value)
    return frozenset(found)


def _decided_in_pass(
    ctx: FileContext, name: str, call: cst.Call, loop: cst.For | cst.While
) -> bool:
    """`name` holds a decision of this pass: a plain assignment in the loop body reaches
    the call (not the loop's counter or batch, not a `+=` counter)."""
    return any(
        b.kind == "assign" and ctx.is_inside(b.statement, loop.body)
        for b in ctx.resolver.reaching(name, call)
    )


def _returns_value(ctx: FileContext, func: cst.FunctionDef) -> bool:
    return any(
        r.value is not None and not (type(r.value) is cst.Name and r.value.value == "None")
        for r in ctx.model.returns.get(func, [])
    )


def _reduced_in_place(ctx: FileContext, func: cst.FunctionDef, param: str) -> bool:
    """A collective in `func` is handed the parameter or a part of it
    (`dist.all_reduce(flag)`, `dist.all_reduce(meter.total)`): it is combined in place."""
    collectives = domain_of(ctx).collectives
    return any(
        collectives.issues(inner) and any(_root(arg.value) == param for arg in inner.args)
        for inner in ctx.calls_within(func)
    )


def _root(expr: cst.BaseExpression) -> str | None:
    while isinstance(expr, (cst.Attribute, cst.Subscript)):
        expr = expr.value
    return expr.value if type(expr) is cst.Name else None


def _exits_on(
    ctx: FileContext, call: cst.Call, loop: cst.For | cst.While, names: frozenset[str]
) -> Iterator[DroppedAgreement]:
    """`break` / `return` leaving `loop` after `call`, under a test that reads one of
    `names` as the call left it (no binding of the name between the call and the test)."""
    for node in ctx.nodes_within(loop.body, cst.Break, cst.Return):
        assert isinstance(node, (cst.Break, cst.Return))
        if not ctx.before(call, node) or ctx.scope(node) is not ctx.scope(call):
            continue
        if type(node) is cst.Break and ctx.enclosing_loop(node) is not loop:
            continue
        for condition in ctx.flow.conditions(node):
            if not ctx.before(call, condition.gate):
                continue
            read = {n.split(".")[0] for n in ctx.names_in(condition.test)} & names
            if read and not _rebound(ctx, read, call, condition.gate):
                yield DroppedAgreement(call, names, node, condition.test)
                break


def _rebound(ctx: FileContext, names: set[str], call: cst.Call, at: cst.CSTNode) -> bool:
    """Every reading of `names` at `at` comes from a binding after `call`."""
    for name in names:
        bindings = ctx.resolver.reaching(name, at)
        if bindings and not all(ctx.before(call, b.statement) for b in bindings):
            return False
    return True

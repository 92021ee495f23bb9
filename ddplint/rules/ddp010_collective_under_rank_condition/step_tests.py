"""Collectives a training step issues only where a test on what this rank computed holds
(`if not torch.isfinite(loss): ... self.load_checkpoint()` ending in `dist.barrier()`):
each rank's loss comes from its own batch, so the ranks can answer the test differently."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain import domain_of
from ddplint.domain.rank_local_tests import rank_local_test, reads_only_shapes, under_test
from ddplint.domain.step_values import step_values


@dataclass(frozen=True)
class StepTestCollective:
    """A collective (or a call issuing one: `surely` whenever it runs) under `test`."""

    call: cst.Call
    test: cst.BaseExpression
    surely: bool
    holds: bool  # reached where the test holds (False: in its `else`)
    shapes: bool  # the test reads only shapes of the step's values (`reads_only_shapes`)


def step_test_collectives(ctx: FileContext) -> Iterator[StepTestCollective]:
    """Collectives in the step of each `backward()` (its loop body, or its function), in
    the same function, under no rank gate, reached only where a test on the step's own
    values holds whose other branch issues no collective."""
    domain = domain_of(ctx)
    collectives, gates = domain.collectives, domain.gates
    seen: set[int] = set()
    for backward in ctx.method_calls("backward"):
        if ctx.qualname(backward.func.value) is not None:  # type: ignore[attr-defined]
            continue  # torch.autograd.backward(...)
        loop = ctx.enclosing_loop(backward)
        scope = ctx.scope(backward)
        region = loop if loop is not None else scope
        if type(region) is cst.Module:
            continue
        candidates = [
            call
            for call in ctx.calls_within(region)
            if id(call) not in seen
            and ctx.scope(call) is scope
            and under_test(ctx, call, region)
            and collectives.issues(call)
            and not collectives.on_subgroup(call)
            and gates.gate(call) is None
        ]
        if not candidates:
            continue
        values = step_values(ctx, region, backward)
        if values.start is None:
            continue
        for call in candidates:
            if not ctx.before(values.start, call):
                continue
            test = rank_local_test(ctx, call, values.names, region)
            if test is None or _other_branch_issues(ctx, test, call):
                continue
            seen.add(id(call))
            yield StepTestCollective(
                call,
                test,
                collectives.surely_issues(call),
                not _in_else(ctx, test, call),
                reads_only_shapes(ctx, test, values.names),
            )


def _in_else(ctx: FileContext, test: cst.BaseExpression, call: cst.Call) -> bool:
    node = ctx.parent(test)
    return type(node) is cst.If and node.orelse is not None and ctx.is_inside(call, node.orelse)


def _other_branch_issues(ctx: FileContext, test: cst.BaseExpression, call: cst.Call) -> bool:
    """The `if` whose test this is issues a collective in its other branch (the one not
    holding `call`) too: the ranks it turns away may match it there."""
    node = ctx.parent(test)
    if type(node) is not cst.If:
        return False
    other = node.body if _in_else(ctx, test, call) else node.orelse
    if other is None:
        return False
    issues = domain_of(ctx).collectives.issues
    return any(type(n) is cst.Call and issues(n) for n in ctx.walk(other))

"""The variables of a `range(...)` loop's bounds that one side of a rank test reassigns
after every rank assigned them."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain import domain_of
from ddplint.domain.gates import Gate


@dataclass(frozen=True)
class Override:
    """`name` may hold, at the loop, a value assigned under `gate` only."""

    name: str
    gate: Gate


def rank_overrides(ctx: FileContext, loop: cst.For) -> list[Override]:
    """For a loop over `range(...)`: each variable of the bounds whose assignments reaching
    the loop include one every rank runs and one only the ranks of a rank test run, which
    assigns another expression (`epochs = opt.epochs` again changes nothing)."""
    iterable = loop.iter
    if not (
        isinstance(iterable, cst.Call)
        and isinstance(iterable.func, cst.Name)
        and iterable.func.value == "range"
        and not ctx.bindings_of("range")
    ):
        return []
    gates, resolver = domain_of(ctx).gates, ctx.resolver
    frame = resolver.model.frame(loop)
    found: list[Override] = []
    for arg in iterable.args:
        for node in ctx.walk(arg.value):
            if not isinstance(node, cst.Name):
                continue
            reaching = resolver.reaching(node.value, loop)
            if len(reaching) < 2 or any(b.scope is not frame for b in reaching):
                continue
            binding_gates = [gates.gate(b.statement) for b in reaching]
            every_rank = {
                ctx.code(b.value).strip()
                for b, g in zip(reaching, binding_gates, strict=True)
                if g is None
            }
            if not every_rank:
                continue
            for binding, gate in zip(reaching, binding_gates, strict=True):
                if (
                    gate is not None
                    and not gates.opens_to_every_rank(gate)
                    and ctx.code(binding.value).strip() not in every_rank
                ):
                    found.append(Override(node.value, gate))
                    break
    return found

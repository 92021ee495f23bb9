"""Values only some ranks change: a variable every rank assigns and one side of a rank test
assigns again (`start_epoch = 0`, then under `if rank == 0:` `start_epoch =
ckpt["epoch"]`; `global_step = 0`, then `global_step += 1` under the rank-0 logging
block). Where both assignments reach a read, the value read differs between ranks."""

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


def rank_overrides(ctx: FileContext, loop: cst.For | cst.While) -> list[Override]:
    """For a loop over `range(...)`, each variable of the bounds that only some ranks
    change (`overridden_names`); for a `while` loop, each such variable of its test
    (`while global_step < n_iters:` with `global_step += 1` on rank 0 only)."""
    if isinstance(loop, cst.While):
        return overridden_names(ctx, loop.test, loop, carried=loop)
    iterable = loop.iter
    if not (
        isinstance(iterable, cst.Call)
        and isinstance(iterable.func, cst.Name)
        and iterable.func.value == "range"
        and not ctx.bindings_of("range")
    ):
        return []
    return [o for arg in iterable.args for o in overridden_names(ctx, arg.value, loop)]


def overridden_names(
    ctx: FileContext, expr: cst.BaseExpression, at: cst.CSTNode, carried: cst.CSTNode | None = None
) -> list[Override]:
    """The names read in `expr` whose assignments reaching `at` (all in its frame) include
    one every rank runs and one only the ranks of a rank test run, which assigns another
    expression (`epochs = opt.epochs` again changes nothing). `carried`: a loop whose test
    `expr` is, so that the assignments of its body reach it from the pass before."""
    gates, resolver = domain_of(ctx).gates, ctx.resolver
    frame = resolver.model.frame(at)
    found: list[Override] = []
    for node in ctx.walk(expr):
        if not isinstance(node, cst.Name):
            continue
        reaching = list(resolver.reaching(node.value, at))
        if carried is not None:
            known = {id(b) for b in reaching}
            reaching += [
                b
                for b in ctx.model.bindings_in(frame).get(node.value, ())
                if id(b) not in known and ctx.is_inside(b.statement, carried)
            ]
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
                and (
                    binding.kind == "augassign" or ctx.code(binding.value).strip() not in every_rank
                )
            ):
                found.append(Override(node.value, gate))
                break
    return found

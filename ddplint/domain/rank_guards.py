"""Rank guards, as several rules ask for them: thin views of `ddplint.domain.gates` (the
one definition of a rank-gated region) and `ddplint.engine.flow` (the one definition of
leaving a block); and branches that run only when the job is not distributed.
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain import domain_of
from ddplint.domain.runners import call_sites, spawned

__all__ = ["call_sites", "everywhere", "guarded_everywhere", "rank_guard", "single_process_branch"]


def rank_guard(ctx: FileContext, node: cst.CSTNode) -> cst.CSTNode | None:
    """What makes `node` run on some ranks only in its function: an enclosing `if` (or
    conditional expression) on a rank test, an earlier `if not main: return`, or a
    `@rank_zero_only` decorator."""
    gate = domain_of(ctx).gates.gate(node)
    return None if gate is None else gate.node


def guarded_everywhere(ctx: FileContext, node: cst.CSTNode, depth: int = 3) -> bool:
    """`node` runs under a rank condition: in its function, or because every call of its
    function in this file does (a few levels up)."""
    return everywhere(ctx, node, lambda at: rank_guard(ctx, at) is not None, depth)


def everywhere(
    ctx: FileContext, node: cst.CSTNode, holds: Callable[[cst.CSTNode], bool], depth: int = 3
) -> bool:
    """`holds(node)`, or `node`'s function is called in this file and `holds` at every
    call (a few levels up). A worker handed to `mp.spawn` runs in the workers too, where
    no call of this file shows: its direct calls (a one-process fallback) do not decide."""
    if holds(node):
        return True
    func = ctx.enclosing_function(node)
    if func is None or depth == 0 or spawned(ctx, func):
        return False
    sites = [s for s in call_sites(ctx, func) if not ctx.is_inside(s, func)]
    return bool(sites) and all(everywhere(ctx, s, holds, depth - 1) for s in sites)


def single_process_branch(ctx: FileContext, node: cst.CSTNode) -> bool:
    """`node` runs only when the job is not distributed (`if not args.distributed:`,
    `if world_size == 1:`, after `if dist.get_world_size() != 1: raise ...`)."""
    return domain_of(ctx).gates.single_process(node)

"""Whether every rank reaches a node, as far as its file shows: no rank gate on the way up
through the callers of its function, ending at module level or at an entry point (`main`,
a function handed to `mp.spawn`). A function nobody in the file calls is its callers'
files' to judge."""

from __future__ import annotations

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain import domain_of
from ddplint.domain.downloads import in_first_context
from ddplint.domain.processes import in_lone_worker
from ddplint.domain.rank_guards import guarded_everywhere, single_process_branch
from ddplint.domain.runners import is_entry, outside_calls

__all__ = ["every_rank_reaches", "per_rank_arguments", "runs_once"]


def runs_once(ctx: FileContext, node: cst.CSTNode) -> bool:
    """`node` runs on one rank (a rank gate, here or at every call of its function), in a
    branch that runs without distribution only, one process at a time (zero-first), or in
    a worker spawned as one process."""
    return (
        guarded_everywhere(ctx, node)
        or single_process_branch(ctx, node)
        or in_first_context(ctx, node)
        or in_lone_worker(ctx, node)
    )


def per_rank_arguments(ctx: FileContext, call: cst.Call) -> bool:
    """An argument is a file name built from the rank: the callee writes per-rank files."""
    return any(domain_of(ctx).ranks.rank_in_text(arg.value) for arg in call.args)


def every_rank_reaches(ctx: FileContext, node: cst.CSTNode, depth: int = 3) -> bool:
    """`node` runs on every rank: no gate on some path up through its callers (a few
    levels), which ends at module level or at an entry point."""
    if runs_once(ctx, node):
        return False
    func = ctx.enclosing_function(node)
    if func is None:
        return True
    if depth == 0:
        return False
    sites = outside_calls(ctx, func)
    if not sites:
        return is_entry(ctx, func)
    return any(every_rank_reaches(ctx, s, depth - 1) for s in sites)

"""Whether every process of the job runs a statement, three-valued, for the rules about
files all ranks write: True when no rank gate stands on some path up through its callers in
this file to module level or an entry point (`every_rank.is_entry`); False when one rank
runs it (a rank gate here or at every call, a zero-first context, one process); None when
that depends on callers out of sight (a function nothing in this file calls)."""

from __future__ import annotations

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain.apis import PROCESS_STARTERS, SPAWN_FUNCTIONS
from ddplint.domain.downloads import one_rank_first
from ddplint.domain.every_rank import is_entry, outside_calls, runs_once
from ddplint.domain.processes import runs_in_one_process
from ddplint.engine import argument

_DEPTH = 3


def every_rank_runs(ctx: FileContext, node: cst.CSTNode) -> bool | None:
    """True: every rank runs `node`; False: one rank, or one process; None: unknown."""
    if runs_in_one_process(ctx, node):
        return False
    func = ctx.enclosing_function(node)
    # A spawned worker's own one-process fallback call does not make it run once.
    if not (func is not None and _spawned(ctx, func)) and one_rank_first(ctx, node):
        return False
    return _reaches(ctx, node, _DEPTH)


def _reaches(ctx: FileContext, node: cst.CSTNode, depth: int) -> bool | None:
    if runs_once(ctx, node):
        return False
    func = ctx.enclosing_function(node)
    if func is None:
        return True
    if _spawned(ctx, func):
        return True
    sites = outside_calls(ctx, func)
    if not sites:
        return True if is_entry(ctx, func) else None
    if depth == 0:
        return None
    answers = [_reaches(ctx, site, depth - 1) for site in sites]
    if True in answers:
        return True
    return None if None in answers else False


def _spawned(ctx: FileContext, func: cst.FunctionDef) -> bool:
    """`func` is handed to `mp.spawn` / `Process(target=...)`: each worker runs it, also
    when the script calls it directly as well (its one-process fallback)."""
    name = func.name.value
    for call in ctx.calls:
        starter = ctx.call_name(call)
        if starter not in PROCESS_STARTERS:
            continue
        spawns = starter in SPAWN_FUNCTIONS
        target = argument(call, 0 if spawns else None, "fn" if spawns else "target")
        if isinstance(target, cst.Name) and target.value == name:
            return True
    return False

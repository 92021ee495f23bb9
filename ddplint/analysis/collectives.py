"""Collectives as the sync rules (DDP010, DDP011) see them: direct calls and same-file or
project helpers that issue one.

Narrower than `DDPFacts.collective_functions` on purpose: `destroy_process_group` is left
out (it is not matched against other ranks' calls), calls inside a lambda do not make
their function collective, and a call of an imported name never counts as a same-file
helper.
"""

from __future__ import annotations

import weakref

import libcst as cst

from ddplint.context import FileContext
from ddplint.facts import COLLECTIVES

SYNC_COLLECTIVES = COLLECTIVES - {"torch.distributed.destroy_process_group"}
_COLLECTIVE_FUNCTIONS: weakref.WeakKeyDictionary[FileContext, dict[str, cst.Call]] = (
    weakref.WeakKeyDictionary()
)


def collective_functions(ctx: FileContext) -> dict[str, cst.Call]:
    """Functions of this file (by name) that issue a collective, directly or through another
    one; value: the collective (or helper) call. One pass over the calls, grouped by their
    function, then a fixpoint over the groups (cached per file)."""
    cached = _COLLECTIVE_FUNCTIONS.get(ctx)
    if cached is not None:
        return cached
    by_function: dict[str, list[cst.Call]] = {}
    for call in ctx.calls:
        scope = ctx.scope(call)
        if isinstance(scope, cst.FunctionDef) and not _in_lambda(ctx, call, scope):
            by_function.setdefault(scope.name.value, []).append(call)
    found: dict[str, cst.Call] = {}
    project = ctx.project
    changed = True
    while changed:
        changed = False
        for name, calls in by_function.items():
            if name in found:
                continue
            for call in calls:
                if (
                    ctx.call_name(call) in SYNC_COLLECTIVES
                    or (isinstance(call.func, cst.Name) and call.func.value in found)
                    # `evaluate()` reducing through `utils.reduce_across_processes()`
                    or (project is not None and project.helper_issues_collective(ctx, call))
                ):
                    found[name] = call
                    changed = True
                    break
    _COLLECTIVE_FUNCTIONS[ctx] = found
    return found


def _in_lambda(ctx: FileContext, node: cst.CSTNode, scope: cst.CSTNode) -> bool:
    for ancestor in ctx.ancestors(node):
        if ancestor is scope:
            return False
        if isinstance(ancestor, cst.Lambda):
            return True
    return False


def reaches_collective(ctx: FileContext, call: cst.Call) -> bool:
    """A collective call, or a call of a helper (this file or the project) issuing one."""
    if ctx.call_name(call) in SYNC_COLLECTIVES:
        return True
    if isinstance(call.func, cst.Name) and call.func.value in collective_functions(ctx):
        return ctx.call_name(call) is None
    project = ctx.project
    return project is not None and project.helper_issues_collective(ctx, call)

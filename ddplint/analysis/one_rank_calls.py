"""Calls that run on one rank only: under a rank guard whose other branch does not make
the same call, in a module-level function reading a global that is only called under a
rank guard, or with an argument passed under a rank guard (a few calls up)."""

from __future__ import annotations

import libcst as cst

from ddplint.context import FileContext
from ddplint.engine import MAX_DEPTH
from ddplint.names import dotted


def other_branch_calls(ctx: FileContext, guard: cst.CSTNode, call: cst.Call) -> bool:
    """The other branch of the rank `if` holding `call` calls the same callee."""
    if not isinstance(guard, cst.If):
        return False
    if ctx.is_inside(call, guard.body):
        other: cst.CSTNode | None = guard.orelse
    else:
        other = guard.body
    name = dotted(call.func)
    if other is None or name is None:
        return False
    return any(isinstance(node, cst.Call) and dotted(node.func) == name for node in ctx.walk(other))


def global_model_site(ctx: FileContext, name: cst.Name, at: cst.CSTNode) -> cst.Call | None:
    """`def estimate_loss(): ... model(x)` reading the module-level DDP `model`, with
    every call of the function under a rank condition (nanoGPT-style scripts)."""
    facts = ctx.facts
    func = ctx.scope(at)
    if not isinstance(func, cst.FunctionDef) or ctx.scope(func) is not ctx.module:
        return None
    binding = facts.reaching_binding(name.value, at)
    if binding is None or binding.kind != "assign" or binding.scope is not ctx.module:
        return None
    if not facts.is_ddp_model(name, at):
        return None
    sites = _resolved_call_sites(ctx, func)
    if not sites:
        return None
    for site in sites:
        guard = facts.rank_guard(site)
        if guard is None or other_branch_calls(ctx, guard, site):
            return None
    return sites[0]


def guarded_site(
    ctx: FileContext, name: cst.Name, at: cst.CSTNode, depth: int = MAX_DEPTH
) -> cst.Call | None:
    """A call site, only reached under a rank condition, that passes a DDP model for
    the parameter `name` of the function holding `at`."""
    if depth == 0:
        return None
    facts = ctx.facts
    binding = facts.reaching_binding(name.value, at)
    if binding is None or binding.kind != "param":
        return None
    for arg in ctx.resolver.arguments_for(binding):
        site = ctx.parent(ctx.parent(arg) or arg)
        if not isinstance(site, cst.Call):
            continue
        site_guard = facts.rank_guard(site)
        if site_guard is not None:
            if other_branch_calls(ctx, site_guard, site):
                continue
            if facts.is_ddp_model(arg, site) and not facts.is_unwrapped_ddp(arg, site):
                return site
        elif isinstance(arg, cst.Name):
            inner = guarded_site(ctx, arg, site, depth - 1)
            if inner is not None:
                return inner
    return None


def _resolved_call_sites(ctx: FileContext, func: cst.FunctionDef) -> list[cst.Call]:
    """The calls the resolver links to `func` (unlike `rank_guards.call_sites`, no
    same-named method call on another object)."""
    return [
        c
        for c in ctx.model.calls_by_name.get(func.name.value, [])
        if func in ctx.resolver.callees(c)
    ]

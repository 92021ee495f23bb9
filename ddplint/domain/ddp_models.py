"""Receivers that may hold a DDP-wrapped model."""

from __future__ import annotations

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain.ddp_facts import DDP_CLASSES, facts_of
from ddplint.names import dotted


def may_be_ddp_model(ctx: FileContext, expr: cst.BaseExpression, at: cst.CSTNode) -> bool:
    """`facts.is_ddp_model`, plus a name bound to `DDP(model) if distributed else model`."""
    if isinstance(expr, cst.Name) and expr.value in ("self", "cls"):
        return False  # the instance itself (facts.arguments_for mis-indexes `self`)
    if facts_of(ctx).is_ddp_model(expr, at):
        return True
    name = dotted(expr)
    binding = facts_of(ctx).reaching_binding(name, at) if name is not None else None
    if binding is None or binding.kind != "assign" or not isinstance(binding.value, cst.IfExp):
        return False
    return any(
        isinstance(branch, cst.Call) and ctx.call_name(branch) in DDP_CLASSES
        for branch in (binding.value.body, binding.value.orelse)
    )

"""Gradient accumulation under DDP: loops that run `backward()` several times per
optimizer step, and whether the backward runs in a context manager given the DDP model
(which may turn synchronisation off itself)."""

from __future__ import annotations

import re

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain.ddp_facts import facts_of, last_name

_OPTIMIZER_NAME = re.compile(r"optim|^opt(_|$)|^opt\d*$")


def _conditions_between(ctx: FileContext, node: cst.CSTNode, top: cst.CSTNode) -> list[cst.If]:
    """The `if` statements (by branch) between `node` and the loop `top`."""
    found: list[cst.If] = []
    child = node
    for ancestor in ctx.ancestors(node):
        if ancestor is top:
            return found
        if type(ancestor) is cst.If and child is not ancestor.test:
            found.append(ancestor)
        if isinstance(ancestor, (cst.FunctionDef, cst.Lambda, cst.IfExp)):
            return found
        child = ancestor
    return found


def _has_modulo(ctx: FileContext, expr: cst.CSTNode) -> bool:
    return any(
        type(n) is cst.BinaryOperation and type(n.operator) is cst.Modulo for n in ctx.walk(expr)
    )


def _is_optimizer_step(call: cst.Call) -> bool:
    func = call.func
    if not (type(func) is cst.Attribute and func.attr.value == "step"):
        return False
    receiver = last_name(func.value) or ""
    if "scaler" in receiver.lower():
        return True
    return bool(_OPTIMIZER_NAME.search(receiver.lower())) and "sched" not in receiver.lower()


def accumulation_loop(ctx: FileContext, backward: cst.Call) -> cst.For | cst.While | None:
    """The loop in which `backward` runs several times per optimizer step: the loop of the
    backward (unconditional there) whose optimizer steps all wait for a counter
    (`if (i + 1) % accum == 0:`), or the loop around an inner micro-batch `for` with one
    optimizer step after it."""
    loop = ctx.enclosing_loop(backward)
    if loop is None or _conditions_between(ctx, backward, loop):
        return None
    steps = [c for c in ctx.calls_within(loop) if _is_optimizer_step(c)]
    if steps:
        return loop if all(_counter_guarded(ctx, s, loop) for s in steps) else None
    outer = ctx.enclosing_loop(loop)
    if type(loop) is not cst.For or outer is None:
        return None
    if _conditions_between(ctx, loop, outer):
        return None
    if not any(
        _is_optimizer_step(c) and not ctx.is_inside(c, loop) for c in ctx.calls_within(outer)
    ):
        return None
    return outer


def in_model_context(ctx: FileContext, node: cst.CSTNode, loop: cst.CSTNode) -> bool:
    """`backward()` inside `with helper(model, ...)` / `with model.something():` in the
    loop: a context manager that gets the DDP model may well enter no_sync()."""
    for ancestor in ctx.ancestors(node):
        if ancestor is loop:
            return False
        if type(ancestor) is not cst.With:
            continue
        for item in ancestor.items:
            call = item.item
            if type(call) is not cst.Call:
                continue
            if (ctx.qualname(call.func) or "").startswith("torch."):
                continue
            receiver = call.func.value if type(call.func) is cst.Attribute else None
            exprs = [a.value for a in call.args]
            if receiver is not None:
                exprs.append(receiver)
            if any(facts_of(ctx).is_ddp_model(e, call) for e in exprs):
                return True
    return False


def _counter_guarded(ctx: FileContext, step: cst.Call, loop: cst.CSTNode) -> bool:
    """`if (i + 1) % accum == 0:`, `if ni - last_step >= accumulate:`, or
    `if is_update_step:` with `is_update_step = (i + 1) % accum == 0 or last` assigned
    in the loop."""
    for condition in _conditions_between(ctx, step, loop):
        if _has_modulo(ctx, condition.test):
            return True
        if type(condition.test) is cst.Comparison and any(
            type(n) is cst.Name and "accum" in n.value.lower() for n in ctx.walk(condition.test)
        ):
            return True  # `if ni - last_opt_step >= accumulate:` (YOLO)
        for node in ctx.walk(condition.test):
            if type(node) is not cst.Name:
                continue
            for binding in ctx.bindings_of(node.value, condition):
                if (
                    binding.kind == "assign"
                    and ctx.is_inside(binding.statement, loop)
                    and _has_modulo(ctx, binding.value)
                ):
                    return True
    return False

"""What the calls in sight pass for a parameter: the calls of a function in its own file
and in the project's other modules that may run on several ranks (the project's index of
callers holds only those: a call from a module that cannot runs in one process)."""

from __future__ import annotations

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain.ddp_facts import is_true
from ddplint.domain.project_view import project_of
from ddplint.domain.runners import handed_on
from ddplint.engine.model import all_params


def arguments_in_sight(
    ctx: FileContext, func: cst.FunctionDef, name: str
) -> list[cst.BaseExpression | None] | None:
    """What each call of `func` in sight passes for its parameter `name` (None for a call
    that passes nothing for it); None when a call passes `*args` or `**kwargs` (it may or
    may not pass it) or a calling module cannot be read."""
    here = ctx.resolver.calls_of(func)
    if any(arg.star for call in here for arg in call.args):
        return None
    passed: list[cst.BaseExpression | None] = [ctx.resolver.passed(c, func, name) for c in here]
    project = project_of(ctx)
    if project is not None:
        elsewhere = project.arguments_elsewhere(ctx, func, name)
        if elsewhere is None:
            return None
        passed.extend(elsewhere)
    return passed


def true_at_every_call(ctx: FileContext, value: cst.BaseExpression) -> bool:
    """`value` reads a parameter of the function it is in (`shuffle=shuffle`), a function
    never handed on (`runners.handed_on`: its callers are all in sight), called in sight
    (`arguments_in_sight`), each call passing a literal `True` for it or leaving its
    literal default `True`; and no assignment in the function reaches `value` instead."""
    frame = ctx.model.frame(value)
    if type(value) is not cst.Name or type(frame) is not cst.FunctionDef:
        return False
    param = next((p for p in all_params(frame.params) if p.name.value == value.value), None)
    if param is None or handed_on(ctx, frame.name.value):
        return False
    if any(b.kind != "param" for b in ctx.resolver.reaching(value.value, value)):
        return False  # `shuffle = False` on some path (beside the sampler): not the argument
    passed = arguments_in_sight(ctx, frame, param.name.value)
    if not passed:
        return False
    given = [param.default if arg is None else arg for arg in passed]
    return all(arg is not None and is_true(arg) for arg in given)

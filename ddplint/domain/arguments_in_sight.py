"""What the calls in sight pass for a parameter: the calls of a function in its own file
and in the project's other modules that may run on several ranks (the project's index of
callers holds only those: a call from a module that cannot runs in one process)."""

from __future__ import annotations

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain.project_view import project_of


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

"""Parameter defaults that no call in sight uses: `device=torch.device("cuda:0")` in a
runner every call of the project constructs with `device=...`. What such a default says
applies only to a call out of sight (a user's), so a finding on it is unproven."""

from __future__ import annotations

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain.arguments_in_sight import arguments_in_sight


def replaced_default(ctx: FileContext, node: cst.CSTNode) -> str | None:
    """The parameter whose default holds `node`, when the function has calls in sight (in
    this file, or in another module of the project that may run on several ranks: the
    project's index of callers holds only those) and every one of them passes that
    parameter; else None. A call through `*args` or `**kwargs` may or may not pass it,
    so it counts as one that does not."""
    found = _default_of(ctx, node)
    if found is None:
        return None
    func, name = found
    passed = arguments_in_sight(ctx, func, name)
    return name if passed and all(value is not None for value in passed) else None


def _default_of(ctx: FileContext, node: cst.CSTNode) -> tuple[cst.FunctionDef, str] | None:
    """(function, parameter) when `node` lies in the default value of a parameter."""
    child: cst.CSTNode = node
    for parent in ctx.ancestors(node):
        if type(parent) is cst.Param:
            params = ctx.parent(parent)
            func = ctx.parent(params) if params is not None else None
            if child is not parent.default or type(func) is not cst.FunctionDef:
                return None  # an annotation, or a lambda's parameter
            return func, parent.name.value
        if isinstance(parent, (cst.FunctionDef, cst.ClassDef, cst.Module, cst.BaseStatement)):
            return None
        child = parent
    return None

"""Parameters that always hold their default: a private function whose every call is in
sight (its name appears in no other file of the project and only in calls in its own),
and no call passes the parameter. A branch that needs another value never runs."""

from __future__ import annotations

import os
import re

import libcst as cst

from ddplint.context import FileContext
from ddplint.engine import Condition
from ddplint.project import named_in_other_files

_CONSTANTS = {"True": True, "False": False, "None": False}
_COMPUTED_LOOKUP = re.compile(r"\bgetattr\([^,()]+,\s*[^\"'\s]|\bglobals\(\)")


def needs_unpassed_argument(ctx: FileContext, node: cst.CSTNode) -> bool:
    """`node` runs only where a parameter holds a value no call passes (`else: return`
    under `if raise_on_error:`, where every call keeps `raise_on_error=True`): it never
    runs."""
    return any(_contradicts(ctx, condition) for condition in ctx.flow.conditions(node))


def _contradicts(ctx: FileContext, condition: Condition) -> bool:
    for term, value in condition.terms():
        if isinstance(term, cst.Name):
            default = default_value(ctx, term, condition.gate)
            if default is not None and default != value:
                return True
    return False


def default_value(ctx: FileContext, name: cst.Name, at: cst.CSTNode) -> bool | None:
    """The truth of the default (`True`, `False`, `None`) that the parameter `name` always
    holds at `at` (no call passes it, the function does not rebind it before `at`); None
    when another value may get there."""
    bindings = ctx.resolver.reaching(name.value, at)
    if len(bindings) != 1 or bindings[0].kind != "param":
        return None
    func = bindings[0].scope
    default = _literal_truth(bindings[0].value)
    if default is None or not isinstance(func, cst.FunctionDef) or not _calls_in_sight(ctx, func):
        return None
    return None if ctx.resolver.arguments_for(bindings[0]) else default


def _literal_truth(value: cst.BaseExpression) -> bool | None:
    """The truth of `True`, `False` or `None`; None for any other default."""
    return _CONSTANTS.get(value.value) if isinstance(value, cst.Name) else None


def _calls_in_sight(ctx: FileContext, func: cst.FunctionDef) -> bool:
    """Every call of `func` is one of this file's calls the resolver links to it, none
    with `*args` or `**kwargs`: it is private (`_name`, or nested in a function), not
    decorated, named nowhere else, and not looked up by a computed name."""
    name = func.name.value
    private = (name.startswith("_") and not name.endswith("__")) or isinstance(
        ctx.scope(func), cst.FunctionDef
    )
    if not private or func.decorators or _COMPUTED_LOOKUP.search(ctx.source):
        return False
    calls = [c for c in ctx.model.calls_by_name.get(name, []) if func in ctx.resolver.callees(c)]
    if not calls or any(arg.star for call in calls for arg in call.args):
        return False
    if len(re.findall(rf"\b{re.escape(name)}\b", ctx.source)) != 1 + len(calls):
        return False
    if not os.path.isfile(ctx.path):
        return False
    return not named_in_other_files(ctx.path, name)

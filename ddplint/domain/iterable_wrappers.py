"""Calls that hand on what they iterate, item for item: `enumerate(loader)`,
`iter(loader)`, a progress bar (`tqdm(loader, desc=...)`, `rich.progress.track(loader)`).
A loop over one iterates the loader inside."""

from __future__ import annotations

import libcst as cst

from ddplint.context import FileContext
from ddplint.names import dotted

_BUILTINS = frozenset({"enumerate", "iter"})
# Progress bars by last name: `tqdm` and `track` from any module (`from utils import
# tqdm` wraps the library's).
_PROGRESS_BARS = frozenset({"tqdm", "track"})


def wrapped_iterable(ctx: FileContext, expr: cst.BaseExpression) -> cst.BaseExpression | None:
    """What `expr` iterates when it is such a call (its first argument), else None. A
    builtin's name bound to a function of the file is not the builtin."""
    if type(expr) is not cst.Call or not expr.args:
        return None
    first = expr.args[0]
    if first.keyword is not None or first.star:
        return None
    func = expr.func
    if type(func) is cst.Name and func.value in _BUILTINS:
        return None if func.value in ctx.functions else first.value
    name = ctx.call_name(expr) or dotted(func) or ""
    return first.value if name.rpartition(".")[2] in _PROGRESS_BARS else None


def entered_name(ctx: FileContext, call: cst.Call) -> str | None:
    """The name `with tqdm(loader) as bar:` binds to a progress bar `call`: its
    `__enter__` returns the bar itself, so `bar` iterates what the call wraps."""
    item = ctx.parent(call)
    if type(item) is not cst.WithItem or item.asname is None or item.item is not call:
        return None
    target = item.asname.name
    if type(target) is not cst.Name or wrapped_iterable(ctx, call) is None:
        return None
    name = ctx.call_name(call) or dotted(call.func) or ""
    return target.value if name.rpartition(".")[2] in _PROGRESS_BARS else None


def unwrapped(ctx: FileContext, expr: cst.BaseExpression) -> cst.BaseExpression:
    """What `expr` iterates inside its wrappers (`enumerate(tqdm(loader))`: `loader`)."""
    inner = wrapped_iterable(ctx, expr)
    while inner is not None:
        expr = inner
        inner = wrapped_iterable(ctx, expr)
    return expr

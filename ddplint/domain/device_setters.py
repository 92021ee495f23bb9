"""Where a process sets its own default device: `torch.cuda.set_device(...)` and the like,
`set_device` on a device module however it is reached (`torch.get_device_module()`,
`getattr(torch, device_type)`, a helper returning `torch.cuda`), and calls into project
code that does one of these (a setup helper, a class whose construction or `with` entry
sets it)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import libcst as cst

from ddplint.domain.apis import DEVICE_CONTEXT, DEVICE_MODULE, DEVICE_MODULES, SET_DEVICE
from ddplint.domain.project_view import project_of
from ddplint.names import dotted

if TYPE_CHECKING:
    from ddplint.context import FileContext

_SETS = SET_DEVICE | DEVICE_CONTEXT
# How a module can name a device module as a value: `getattr(torch, ...)`,
# `torch.get_device_module(...)`, `torch.cuda` not followed by an attribute.
_NAMES_A_MODULE = re.compile(
    r"getattr\(\s*torch\b|get_device_module|\btorch\.(cuda|xpu|npu|mlu|hpu|musa)\b(?![.\w])"
)


def sets_device(ctx: FileContext, call: cst.Call) -> bool:
    """`call` sets the default device of this process by itself: a `SET_DEVICE` or
    `DEVICE_CONTEXT` API, or `.set_device(...)` on a device module (`device_module`)."""
    if ctx.call_name(call) in _SETS:
        return True
    func = call.func
    return (
        type(func) is cst.Attribute
        and func.attr.value == "set_device"
        and device_module(ctx, func.value, call)
    )


def reaches_set_device(ctx: FileContext, call: cst.Call) -> bool:
    """`sets_device`, or a call of project code of another module that sets the device:
    a function (directly or through others), a class whose construction does, or a class
    entered by `with` whose `__enter__` does (`Project.helper_sets_device`)."""
    if sets_device(ctx, call):
        return True
    project = project_of(ctx)
    return project is not None and project.helper_sets_device(ctx, call)


def device_module(ctx: FileContext, expr: cst.BaseExpression, at: cst.CSTNode) -> bool:
    """`expr` may hold a device module: `torch.cuda` (any of `DEVICE_MODULES`),
    `torch.get_device_module(...)`, `getattr(torch, ...)`, directly or through names and
    the returns of this file's functions; or what a project helper of another module
    returns when it returns one (`Project.helper_returns_device_module`)."""
    for value in ctx.resolver.values(expr, at):
        held = value.expr
        if type(held) is cst.Attribute and ctx.qualname(held) in DEVICE_MODULES:
            return True
        if type(held) is not cst.Call:
            continue
        if ctx.call_name(held) == DEVICE_MODULE or _torch_attribute(ctx, held):
            return True
        project = project_of(ctx)
        if value.leaf and project is not None and project.helper_returns_device_module(ctx, held):
            return True
    return False


def _torch_attribute(ctx: FileContext, call: cst.Call) -> bool:
    """`getattr(torch, device_type)`: a device module named at run time."""
    return (
        dotted(call.func) == "getattr"
        and bool(call.args)
        and ctx.qualname(call.args[0].value) == "torch"
    )


def may_hold_device_module(source: str) -> bool:
    """A text test before asking `device_module` of every value a module returns: the
    module names a device module as a value somewhere (`_NAMES_A_MODULE`)."""
    return _NAMES_A_MODULE.search(source) is not None

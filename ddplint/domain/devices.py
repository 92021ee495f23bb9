"""CUDA device choices: the expressions a call picks its device from, device strings
built from an index, and the local GPU count."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain.ddp_facts import (
    DDP_CLASSES,
    argument,
    facts_of,
    keyword,
    string_value,
    strip_conversion,
)
from ddplint.names import dotted


def device_string_index(expr: cst.BaseExpression) -> cst.BaseExpression | None:
    """`rank` for `f"cuda:{rank}"`, `"cuda:{}".format(rank)`, `"cuda:%d" % rank`."""
    if type(expr) is cst.FormattedString:
        parts = expr.parts
        if (
            len(parts) == 2
            and type(parts[0]) is cst.FormattedStringText
            and parts[0].value == "cuda:"
            and type(parts[1]) is cst.FormattedStringExpression
        ):
            return parts[1].expression
        return None
    if (
        type(expr) is cst.Call
        and type(expr.func) is cst.Attribute
        and expr.func.attr.value == "format"
        and string_value(expr.func.value) == "cuda:{}"
        and len(expr.args) == 1
    ):
        return expr.args[0].value
    if (
        type(expr) is cst.BinaryOperation
        and type(expr.operator) is cst.Modulo
        and string_value(expr.left) in ("cuda:%d", "cuda:%s", "cuda:%i")
    ):
        return expr.right
    return None


def device_arguments(ctx: FileContext, call: cst.Call) -> Iterator[cst.BaseExpression]:
    """The expressions a call uses to choose a CUDA device: `set_device(x)`,
    `torch.cuda.device(x)`, `torch.device("cuda", x)` / `torch.device(x)`, `.to(x)`,
    `.cuda(x)`, `DDP(device_ids=[x], output_device=x)`; both alternatives of a
    conditional one (`torch.device(f"cuda:{local_rank}" if cuda else "cpu")`)."""
    for value in _device_arguments(ctx, call):
        yield from _alternatives(value)


def _alternatives(expr: cst.BaseExpression) -> Iterator[cst.BaseExpression]:
    """`a` and `b` for `a if c else b` (nested ones too); `expr` itself otherwise."""
    if type(expr) is cst.IfExp:
        yield from _alternatives(expr.body)
        yield from _alternatives(expr.orelse)
    else:
        yield expr


def _device_arguments(ctx: FileContext, call: cst.Call) -> Iterator[cst.BaseExpression]:
    name = ctx.call_name(call)
    if name in ("torch.cuda.set_device", "torch.cuda.device"):
        value = argument(call, 0, "device")
        if value is not None:
            yield value
        return
    if name == "torch.device":
        index = argument(call, 1, "index")
        if index is not None:
            yield index
        else:
            value = argument(call, 0, "type")
            if value is not None:
                yield value
        return
    if name in DDP_CLASSES:
        ids = argument(call, 1, "device_ids")
        if isinstance(ids, (cst.List, cst.Tuple)):
            for element in ids.elements:
                yield element.value
        output = keyword(call, "output_device")
        if output is not None:
            yield output.value
        return
    if name is None and type(call.func) is cst.Attribute:
        method = call.func.attr.value
        if method in ("to", "cuda"):
            value = argument(call, 0, "device")
            if value is not None:
                yield value


def is_device_count(ctx: FileContext, expr: cst.BaseExpression, depth: int = 4) -> bool:
    """`torch.cuda.device_count()` (maybe `int(...)`), or a name bound to it."""
    expr = strip_conversion(expr, ("int",))
    if type(expr) is cst.Call:
        return ctx.call_name(expr) == "torch.cuda.device_count"
    name = dotted(expr)
    if name is None or depth == 0:
        return False
    binding = facts_of(ctx).binding_before(name, expr)
    if binding is None or binding.kind != "assign":
        return False
    return is_device_count(ctx, binding.value, depth - 1)

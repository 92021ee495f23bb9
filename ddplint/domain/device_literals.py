"""Hard-coded CUDA devices: where a call is given a literal device index (`"cuda:0"`,
`.cuda(0)`, `device_ids=[0]`, `torch.device("cuda", 0)`), directly or through a name
bound to one. A device only compared against (an expected value) is not one, nor is one a
value leaves at once for the CPU (`.to(0).to("cpu")`: a round trip, nothing stays there)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain.ddp_facts import (
    DDP_CLASSES,
    argument,
    facts_of,
    keyword,
    last_name,
    string_value,
)

_CUDA_INDEX = re.compile(r"^cuda:\d+$")
_DEVICE_CALLS = frozenset({"torch.device", "torch.cuda.set_device", "torch.cuda.device"})


def _int_literal(expr: cst.BaseExpression | None) -> cst.Integer | None:
    return expr if type(expr) is cst.Integer else None


def cuda_literal(expr: cst.BaseExpression | None) -> cst.SimpleString | None:
    """A `"cuda:N"` string, also as a branch of `"cuda:0" if available else "cpu"`."""
    if type(expr) is cst.IfExp:
        return cuda_literal(expr.body) or cuda_literal(expr.orelse)
    if type(expr) is cst.SimpleString:
        value = string_value(expr)
        if value is not None and _CUDA_INDEX.match(value):
            return expr
    return None


@dataclass(frozen=True)
class HardcodedDevice:
    """A literal device index and how the call spells it (`device_ids=[0]`)."""

    literal: cst.SimpleString | cst.Integer
    what: str
    loads: bool = False  # `torch.load(..., map_location="cuda:0")`: where a load lands

    @property
    def shown(self) -> str:
        """`"cuda:0"` for a device string, else "index in `.cuda(0)`"."""
        if self.what.startswith('"'):
            return self.what
        return f"index in `{self.what}`"


def _device_value(
    ctx: FileContext, expr: cst.BaseExpression | None, at: cst.CSTNode
) -> cst.SimpleString | None:
    """A `"cuda:N"` literal given directly, or through a name bound to one (or to
    `torch.device("cuda:N")`)."""
    if expr is None:
        return None
    literal = cuda_literal(expr)
    if literal is not None:
        return literal
    if type(expr) is cst.Name:
        binding = facts_of(ctx).reaching_binding(expr.value, at)
        if binding is not None and binding.kind == "assign":
            value = binding.value
            literal = cuda_literal(value)
            if literal is not None:
                return literal
    return None


def _expected_value(ctx: FileContext, device: cst.Call) -> bool:
    """`get_local_device() == torch.device("cuda:3")`, `self.assertEqual(d,
    torch.device("cuda:0"))`: a device compared against, not one any process uses."""
    parent = ctx.parent(device)
    if isinstance(parent, (cst.Comparison, cst.ComparisonTarget)):
        return True
    owner = ctx.parent(parent) if type(parent) is cst.Arg else None
    return type(owner) is cst.Call and (last_name(owner.func) or "").startswith("assert")


def _round_trip(ctx: FileContext, moved: cst.Call) -> bool:
    """`x.to(0).to("cpu")`, `x.cuda(0).cpu()`: the moved value goes straight back to the
    CPU (bitsandbytes quantizes a weight on the GPU that way): nothing stays on the GPU."""
    receiver = ctx.parent(moved)
    if type(receiver) is not cst.Attribute:
        return False
    then = ctx.parent(receiver)
    if not (type(then) is cst.Call and then.func is receiver):
        return False
    method = receiver.attr.value
    if method == "cpu":
        return not then.args
    target = argument(then, 0, "device")
    if type(target) is cst.Call and ctx.call_name(target) == "torch.device":
        target = argument(target, 0, "type")
    return method == "to" and string_value(target) == "cpu"


def hardcoded_devices(ctx: FileContext) -> Iterator[HardcodedDevice]:
    """Every literal CUDA device index a call is given, in call order."""
    for call in ctx.calls:
        name = ctx.call_name(call)
        func = call.func
        method = func.attr.value if type(func) is cst.Attribute else None
        if method in ("to", "cuda") and _round_trip(ctx, call):
            continue
        if name in _DEVICE_CALLS:
            if name == "torch.device" and _expected_value(ctx, call):
                continue
            first = argument(call, 0, "device" if name != "torch.device" else "type")
            literal = cuda_literal(first)
            if literal is not None:
                yield HardcodedDevice(literal, f'"{string_value(literal)}"')
            elif name == "torch.device":
                index = _int_literal(argument(call, 1, "index"))
                if index is not None and string_value(first) == "cuda":
                    yield HardcodedDevice(index, f'torch.device("cuda", {index.value})')
            elif (number := _int_literal(first)) is not None:
                yield HardcodedDevice(number, f"{ctx.code(func)}({number.value})")
            continue
        if name == "torch.load":
            literal = cuda_literal(argument(call, 1, "map_location"))
            if literal is not None:
                yield HardcodedDevice(literal, f'"{string_value(literal)}"', loads=True)
            continue
        if name in DDP_CLASSES:
            ids = keyword(call, "device_ids")
            if ids is not None and type(ids.value) is cst.List and len(ids.value.elements) == 1:
                index = _int_literal(ids.value.elements[0].value)
                if index is not None:
                    yield HardcodedDevice(index, f"device_ids=[{index.value}]")
            # `output_device` places nothing: DDP wraps a single-device module (one entry in
            # `device_ids`, where the forward runs and returns) and never reads it there,
            # and with no `device_ids` it refuses any `output_device` (ValueError).
            continue
        if method == "cuda" and not (name or "").startswith("torch."):
            first = argument(call, 0, "device")
            if (number := _int_literal(first)) is not None:
                yield HardcodedDevice(number, f".cuda({number.value})")
                continue
            literal = cuda_literal(first)
            if literal is not None:
                yield HardcodedDevice(literal, f'.cuda("{string_value(literal)}")')
            continue
        if method == "to" and not (name or "").startswith("torch."):
            first = argument(call, 0, "device")
            if (number := _int_literal(first)) is not None:
                yield HardcodedDevice(number, f".to({number.value})")
                continue
            literal = _device_value(ctx, first, call)
            if literal is not None:
                yield HardcodedDevice(literal, f'"{string_value(literal)}"')
            continue
        device = keyword(call, "device")
        if device is not None:
            literal = _device_value(ctx, device.value, call)
            if literal is not None:
                yield HardcodedDevice(literal, f'"{string_value(literal)}"')

"""Where a file sets `CUDA_VISIBLE_DEVICES` to one constant device, and where it picks a
GPU from a per-process value (the local rank, the spawn index)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain.apis import DDP_CLASSES, SET_DEVICE
from ddplint.domain.rank_evidence import RankEvidence
from ddplint.engine.resolve import argument

VARIABLE = "CUDA_VISIBLE_DEVICES"
_ONE_DEVICE = re.compile(r"\s*\d+\s*")
_ENVIRON = "os.environ"
_DEPTH = 4


@dataclass(frozen=True)
class Pin:
    """`node` sets the variable to `device` (the only value it can hold)."""

    node: cst.CSTNode
    device: str


def pins(ctx: FileContext) -> Iterator[Pin]:
    """Every statement that sets `CUDA_VISIBLE_DEVICES` to one constant device index:
    `os.environ[...] = "0"`, `os.environ.setdefault(...)`, `os.environ.update(...)`,
    `os.putenv(...)`."""
    for node in ctx.nodes_of(cst.Assign):
        assert type(node) is cst.Assign
        if any(_is_variable(ctx, t.target) for t in node.targets):
            device = _one_device(ctx, node.value, node)
            if device is not None:
                yield Pin(node, device)
    for call in ctx.calls:
        value = _set_by_call(ctx, call)
        if value is not None:
            device = _one_device(ctx, value, call)
            if device is not None:
                yield Pin(call, device)


def _is_variable(ctx: FileContext, target: cst.BaseExpression) -> bool:
    return (
        type(target) is cst.Subscript
        and ctx.qualname(target.value) == _ENVIRON
        and len(target.slice) == 1
        and type(target.slice[0].slice) is cst.Index
        and _string(target.slice[0].slice.value) == VARIABLE
    )


def _set_by_call(ctx: FileContext, call: cst.Call) -> cst.BaseExpression | None:
    name = ctx.call_name(call)
    if name in ("os.environ.setdefault", "os.putenv"):
        key = argument(call, 0, "key")
        return argument(call, 1, "value") if key is not None and _string(key) == VARIABLE else None
    if name == "os.environ.update":
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value == VARIABLE:
                return arg.value
            if arg.keyword is None and type(arg.value) is cst.Dict:
                for element in arg.value.elements:
                    if type(element) is cst.DictElement and _string(element.key) == VARIABLE:
                        return element.value
    return None


def _string(expr: cst.BaseExpression | None) -> str | None:
    if type(expr) is cst.SimpleString:
        value = expr.evaluated_value
        return value if isinstance(value, str) else None
    return None


def _one_device(ctx: FileContext, expr: cst.BaseExpression, at: cst.CSTNode) -> str | None:
    """The one device index every value of `expr` is (`"0"`, a constant `GPU = "1"`);
    None when a value is anything else (several devices, a rank, an argument)."""
    devices = set()
    for value in ctx.resolver.values(expr, at):
        if not value.leaf:
            continue  # a name: what it holds is in the list too
        text = _string(value.expr)
        if text is None or not _ONE_DEVICE.fullmatch(text):
            return None
        devices.add(text.strip())
    return devices.pop() if len(devices) == 1 else None


def per_process_picks(ctx: FileContext, evidence: RankEvidence) -> Iterator[cst.CSTNode]:
    """Device choices made from a value that differs per process: `set_device(local_rank)`,
    `.cuda(local_rank)`, `.to(f"cuda:{local_rank}")`, `torch.device("cuda", rank)`,
    `DistributedDataParallel(device_ids=[local_rank])`."""
    for call in ctx.calls:
        name = ctx.call_name(call)
        func = call.func
        if name in SET_DEVICE or name == "torch.device":
            candidates = [a.value for a in call.args]
        elif name in DDP_CLASSES:
            ids = argument(call, 1, "device_ids")
            candidates = list(_elements(ids))
        elif type(func) is cst.Attribute and func.attr.value in ("cuda", "to"):
            candidates = [a.value for a in call.args[:1]]
        else:
            continue
        if any(_traced(ctx, evidence, c, call) for c in candidates):
            yield call


def _elements(expr: cst.BaseExpression | None) -> Iterator[cst.BaseExpression]:
    if isinstance(expr, (cst.List, cst.Tuple)):
        for element in expr.elements:
            yield element.value


def _traced(
    ctx: FileContext, evidence: RankEvidence, expr: cst.BaseExpression, at: cst.CSTNode
) -> bool:
    """`expr` is, or formats into a device string, a value that differs per process."""
    for value in ctx.resolver.values(expr, at, 2):
        held = value.expr
        if type(held) is cst.FormattedString:
            if any(
                type(p) is cst.FormattedStringExpression
                and evidence.value_traced(p.expression, value.at, _DEPTH)
                for p in held.parts
            ):
                return True
        elif not isinstance(held, (cst.SimpleString, cst.Integer)) and evidence.value_traced(
            held, value.at, _DEPTH
        ):
            return True
    return False

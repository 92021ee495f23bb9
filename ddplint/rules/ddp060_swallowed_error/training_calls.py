"""The first call of a block that runs a DDP training step: a `backward()` through a DDP
model (DDP's gradient all-reduce runs inside it), a function of this file handed the DDP
model that runs `backward()`, or a function of this file whose body does one of these
(followed three calls deep). An explicit collective alone is not one: a `try` around
`all_reduce` that passes is mostly a fallback for a run without a process group."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain.ddp_steps import ddp_backward, trains_ddp_model

_DEPTH = 3


@dataclass(frozen=True)
class TrainingCall:
    """A call in the block, and what it issues, worded for a message."""

    call: cst.Call
    issues: str


def first_training_call(ctx: FileContext, block: cst.CSTNode) -> TrainingCall | None:
    """The first call in `block` (not entering nested functions) that runs a DDP training
    step; None when none is proven."""
    for call in ctx.calls_within(block):
        issues = _issues(ctx, call, _DEPTH, set())
        if issues is not None:
            return TrainingCall(call, issues)
    return None


def _issues(ctx: FileContext, call: cst.Call, depth: int, seen: set[int]) -> str | None:
    if ddp_backward(ctx, call):
        return "DDP's gradient all-reduce runs inside this `backward()`"
    if trains_ddp_model(ctx, call):
        return "it runs `backward()` through the DDP model (DDP's gradient all-reduce)"
    if depth == 0 or ctx.qualname(call.func) is not None:
        return None
    for function in ctx.resolver.callees(call):
        if id(function) in seen or not isinstance(function, cst.FunctionDef):
            continue
        seen.add(id(function))
        for inner in ctx.calls_within(function):
            if _issues(ctx, inner, depth - 1, seen) is not None:
                return f"DDP training runs inside it (`{ctx.code(inner.func)}()`)"
    return None

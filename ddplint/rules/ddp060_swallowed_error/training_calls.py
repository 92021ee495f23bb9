"""The first call of a block that runs a DDP training step: a `backward()` through a DDP
model (DDP's gradient all-reduce runs inside it), a function of this file handed the DDP
model that runs `backward()`, or a function of this file whose body does one of these
(followed three calls deep). An explicit collective alone is not one: a `try` around
`all_reduce` that passes is mostly a fallback for a run without a process group."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain import domain_of
from ddplint.domain.ddp_steps import ddp_backward, trains_ddp_model

_DEPTH = 3


@dataclass(frozen=True)
class TrainingCall:
    """A call in the block, what it issues (worded for a message), and whether its model
    is proven to be DDP-wrapped (a `backward()` on a model from out of sight is not)."""

    call: cst.Call
    issues: str
    proven: bool


def first_training_call(ctx: FileContext, block: cst.CSTNode) -> TrainingCall | None:
    """The first call in `block` (not entering nested functions) that runs a DDP training
    step, else the first `backward()` whose model comes from out of sight; None when
    there is neither."""
    unproven: TrainingCall | None = None
    for call in ctx.calls_within(block):
        issues = _issues(ctx, call, _DEPTH, set())
        if issues is not None:
            return TrainingCall(call, issues, proven=True)
        if unproven is None and domain_of(ctx).backward.site_of(call) is not None:
            issues = "DDP's gradient all-reduce runs inside it if its model is DDP-wrapped"
            unproven = TrainingCall(call, issues, proven=False)
    return unproven


def _issues(ctx: FileContext, call: cst.Call, depth: int, seen: set[int]) -> str | None:
    if ddp_backward(ctx, call):
        return "DDP's gradient all-reduce runs inside this `backward()`"
    if trains_ddp_model(ctx, call):
        return "it runs `backward()` through the DDP model (DDP's gradient all-reduce)"
    if depth == 0 or ctx.qualname(call.func) is not None:
        return None
    for function in ctx.resolver.callees(call):
        if id(function) in seen or type(function) is not cst.FunctionDef:
            continue
        seen.add(id(function))
        for inner in ctx.calls_within(function):
            if _issues(ctx, inner, depth - 1, seen) is not None:
                return f"DDP training runs inside it (`{ctx.code(inner.func)}()`)"
    return None

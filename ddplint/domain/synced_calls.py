"""One answer to "do these calls issue a collective on every pass": a `torch.distributed`
collective (or a helper that issues one), or a backward after a forward through a DDP
model, whose gradient all-reduce is one."""

from __future__ import annotations

import enum

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain import domain_of
from ddplint.domain.ddp_facts import facts_of


class Synced(enum.Enum):
    YES = "yes"
    NO = "no"
    UNKNOWN = "unknown"  # a DDP model is handed to a function out of sight


GRADIENT_SYNC = "DDP's gradient all-reduce"


def synced_calls(
    ctx: FileContext, calls: list[cst.Call], training_only: bool = False
) -> tuple[Synced, str]:
    """YES where `calls` (a loop's body, what runs after a statement) issue a collective in
    sight: a collective call or a helper issuing one, a backward after a forward through a
    DDP model, or a function of this file handed the DDP model that runs backward; UNKNOWN
    where a DDP model goes to a function out of sight; NO otherwise. With it, what they
    issue, for a message. `training_only` counts DDP training steps only."""
    domain = domain_of(ctx)
    for call in calls:
        if not training_only and domain.collectives.issues(call):
            return Synced.YES, f"`{ctx.code(call.func)}()`"
    backward = any(domain.backward.site_of(call) is not None for call in calls)
    unknown = False
    for call in calls:
        candidates = (call.func, *(a.value for a in call.args))
        models = [e for e in candidates if facts_of(ctx).is_ddp_model(e, call)]
        if not models:
            continue
        if backward and models[0] is call.func:
            return Synced.YES, GRADIENT_SYNC  # `model(x)` ... `loss.backward()`
        callees = ctx.resolver.callees(call)
        if any(domain.loops.runs_backward(f) for f in callees):
            return Synced.YES, GRADIENT_SYNC
        if not callees and ctx.call_name(call) is None:
            unknown = True
    return (Synced.UNKNOWN if unknown else Synced.NO), GRADIENT_SYNC

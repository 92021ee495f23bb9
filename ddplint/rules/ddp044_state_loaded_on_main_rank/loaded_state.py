"""What a `load_state_dict` call loads into (a DDP model, an optimizer or scheduler), the
calls that run after it, and whether those make the ranks equal again."""

from __future__ import annotations

import enum

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain import domain_of
from ddplint.domain.apis import DDP_CLASSES
from ddplint.domain.checkpoints import keys_stripped
from ddplint.domain.ddp_facts import facts_of
from ddplint.names import dotted

_SCHEDULERS = "torch.optim.lr_scheduler."
_RESYNC = ("broadcast", "sync_params", "sync_module_states")


class LoadedState(enum.Enum):
    MODEL = "model"  # a DDP model or its `.module`
    OPTIMIZER = "optimizer"
    SCHEDULER = "scheduler"  # a learning-rate scheduler


def loaded_state(ctx: FileContext, call: cst.Call) -> LoadedState | None:
    """What `x.load_state_dict(...)` loads into, where the model proves it."""
    func = call.func
    if type(func) is not cst.Attribute:
        return None
    receiver = func.value
    if facts_of(ctx).is_ddp_model(receiver, call):
        return LoadedState.MODEL
    if (
        type(receiver) is cst.Attribute
        and receiver.attr.value == "module"
        and facts_of(ctx).is_ddp_model(receiver.value, call)
    ):
        return LoadedState.MODEL  # `model.module.load_state_dict(...)`
    loops = domain_of(ctx).loops
    for value in ctx.resolver.values(receiver, call):
        built = value.expr
        if type(built) is not cst.Call:
            continue
        if (ctx.call_name(built) or "").startswith(_SCHEDULERS):
            return LoadedState.SCHEDULER
        if loops.is_optimizer_class(built):
            return LoadedState.OPTIMIZER
    return None


def refuses_bare_keys(ctx: FileContext, call: cst.Call) -> bool:
    """`wrapper.load_state_dict(state)` (strict) into the DDP wrapper itself, where the
    state may be one whose keys lost their `module.` prefix (`checkpoints.keys_stripped`):
    the load raises on that path and loads nothing."""
    func = call.func
    if type(func) is not cst.Attribute or not call.args:
        return False
    if not facts_of(ctx).is_ddp_model(func.value, call):
        return False  # `.module.load_state_dict(...)` takes the bare keys
    strict = next((a.value for a in call.args if a.keyword and a.keyword.value == "strict"), None)
    if strict is not None and not (type(strict) is cst.Name and strict.value == "True"):
        return False
    state = call.args[0].value
    return any(keys_stripped(ctx, v.expr) for v in ctx.resolver.values(state, call) if v.leaf)


def runs_after(ctx: FileContext, call: cst.Call) -> list[cst.Call]:
    """The calls of `call`'s function that may run after it: later in the source, and
    anywhere in a loop around it (the next pass)."""
    frame = ctx.scope(call)
    loops: list[cst.CSTNode] = []
    loop = ctx.enclosing_loop(call)
    while loop is not None:
        loops.append(loop)
        loop = ctx.enclosing_loop(loop)
    return [
        c
        for c in ctx.calls_within(frame)
        if c is not call
        and (ctx.before(call, c) or any(ctx.is_inside(c, outer) for outer in loops))
    ]


def synced_again(ctx: FileContext, after: list[cst.Call]) -> bool:
    """A later call makes the ranks equal again: a new DDP wrap (it broadcasts rank 0's
    state), or a broadcast of the state (`dist.broadcast`, a helper of the file named for
    one or issuing one, `sync_module_states`)."""
    collectives = domain_of(ctx).collectives
    for later in after:
        if ctx.call_name(later) in DDP_CLASSES:
            return True
        inner = collectives.through(later)
        for named in (later, inner):
            callee = (dotted(named.func) or "").rpartition(".")[2] if named else ""
            if any(part in callee for part in _RESYNC):
                return True
    return False

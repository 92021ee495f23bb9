"""Whether a training step runs a DDP-wrapped model in sight: the gradient all-reduce that
DDP issues inside `backward()` (from C++, never through `torch.distributed`) is then part
of the step, and every rank must reach that `backward()` the same number of times."""

from __future__ import annotations

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain import domain_of
from ddplint.domain.ddp_facts import facts_of


def steps_ddp_model(ctx: FileContext, region: cst.CSTNode, backward: cst.Call) -> bool:
    """Whether the step `region` (a loop or a function) that ends in `backward` is proven
    to run a DDP-wrapped model: one is called before the backward (`model(x)`) or handed
    to a call there (`loss = compute_loss(model, batch)`), or inside the backward's own
    receiver (`model(x).sum().backward()`), on every path that reaches the backward
    (`_on_every_path`). A step whose model is built
    without DDP (a batch-size probe on a temporary model) or comes from out of sight has
    no gradient all-reduce in sight."""
    facts = facts_of(ctx)
    forwards = [
        call
        for call in ctx.calls_within(region)
        if call is not backward
        and (ctx.before(call, backward) or ctx.is_inside(call, backward.func))
        and (
            facts.is_ddp_model(call.func, call)
            or any(
                facts.is_ddp_model(arg.value, call) and not _runs_only_its_module(ctx, call, arg)
                for arg in call.args
            )
        )
    ]
    return any(_on_every_path(ctx, call, backward, forwards) for call in forwards)


def steps_only_its_module(ctx: FileContext, region: cst.CSTNode, backward: cst.Call) -> bool:
    """For a step `region` ending in `backward` that `steps_ddp_model` does not prove to
    run the wrapper's forward (the caller asks that first): it runs a DDP-wrapped model
    through the module inside it (`model.module.p_losses(...)`, or a function of this file
    handed the wrapper that does so), so DDP's hooks expect no backward and the backward
    all-reduces nothing."""
    facts = facts_of(ctx)
    for call in ctx.calls_within(region):
        if call is backward or not ctx.before(call, backward):
            continue
        func = call.func
        inner = func.value if type(func) is cst.Attribute else None
        if (
            type(inner) is cst.Attribute
            and inner.attr.value == "module"
            and facts.is_ddp_model(inner.value, call)
        ):
            return True
        if any(
            facts.is_ddp_model(arg.value, call) and _runs_only_its_module(ctx, call, arg)
            for arg in call.args
        ):
            return True
    return False


def _runs_only_its_module(ctx: FileContext, call: cst.Call, arg: cst.Arg) -> bool:
    """`call` hands the model as `arg` to functions of this file that only reach into its
    `.module` (`compute_loss(model, batch)` running `model.module.p_losses(...)`): no
    forward of the wrapper runs there, so the step's backward all-reduces nothing."""
    callees = ctx.resolver.callees(call)
    if not callees:
        return False
    for func in callees:
        params = [
            p.name.value
            for p in (*func.params.posonly_params, *func.params.params, *func.params.kwonly_params)
            if ctx.resolver.passed(call, func, p.name.value) is arg.value
        ]
        if len(params) != 1 or not _unwrapped_everywhere(ctx, func, params[0]):
            return False
    return True


def _unwrapped_everywhere(ctx: FileContext, func: cst.FunctionDef, param: str) -> bool:
    """Every read of the parameter `param` in `func` takes its `.module`."""
    reads = [
        name
        for name in ctx.nodes_within(func.body, cst.Name)
        if type(name) is cst.Name and name.value == param
    ]
    return bool(reads) and all(
        type(parent := ctx.parent(name)) is cst.Attribute
        and parent.value is name
        and parent.attr.value == "module"
        for name in reads
    )


def _on_every_path(
    ctx: FileContext, call: cst.Call, backward: cst.Call, forwards: list[cst.Call]
) -> bool:
    """The DDP forward `call` runs wherever `backward` does: each branch it sits in and
    the backward does not is a mode check (`if args.distributed:`) or an `if` whose other
    branch runs a DDP forward of `forwards` too (`if amp: out = model(x) else: out =
    model(x)`). `if use_adapter: out = ddp_adapter(h) else: out = bare(x)` steps the DDP
    model on one path only: the other backward has no all-reduce in it."""
    flow = ctx.flow
    shared = {(id(c.gate), c.holds) for c in flow.conditions(backward)}
    ranks = domain_of(ctx).ranks
    for condition in flow.conditions(call):
        if condition.early_exit or (id(condition.gate), condition.holds) in shared:
            continue
        if ranks.is_mode_check(condition.test):
            continue
        gate = condition.gate
        other = None
        if type(gate) is cst.If:
            other = gate.body if not condition.holds else gate.orelse
        if other is None or not any(ctx.is_inside(f, other) for f in forwards if f is not call):
            return False
    return True


def trains_ddp_model(ctx: FileContext, call: cst.Call) -> bool:
    """`call` runs a function of this file that reaches `backward()` (`fit_one_epoch(model,
    loader, ...)`), and hands it a DDP-wrapped model."""
    loops = domain_of(ctx).loops
    if not any(loops.runs_backward(f) for f in ctx.resolver.callees(call)):
        return False
    return any(facts_of(ctx).is_ddp_model(arg.value, call) for arg in call.args)


def ddp_backward(ctx: FileContext, call: cst.Call) -> bool:
    """`call` is a `backward()` whose step (its loop, else its function) runs a DDP model
    in sight."""
    if domain_of(ctx).backward.site_of(call) is None:
        return False
    region = ctx.enclosing_loop(call) or ctx.enclosing_function(call)
    return region is not None and steps_ddp_model(ctx, region, call)

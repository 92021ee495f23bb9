"""DDP026: training forward through `model.module(...)` of a DDP model."""

from __future__ import annotations

import re
from collections.abc import Iterator

import libcst as cst

from ddplint.context import FileContext
from ddplint.diagnostics import Applicability, Severity
from ddplint.domain import domain_of
from ddplint.domain.apis import DDP_CLASSES
from ddplint.domain.backward import Step
from ddplint.domain.ddp_facts import argument, dropped_as_made, facts_of
from ddplint.domain.frozen_modules import frozen_whole
from ddplint.domain.gradient_sync import reduces_gradients_here
from ddplint.domain.project_view import project_of
from ddplint.engine.resolve import argument_for
from ddplint.names import dotted, on_self
from ddplint.rule import Finding, FixSpec, Rule, register
from ddplint.rules.ddp026_training_forward_through_module.bare_modules import (
    bare_apart_from_backward,
    bare_module_sources,
    scope_calls_wrapper,
    scope_hands_wrapper_on,
)

# `ddp.module`, `getattr(ddp, "module", ddp)`, `unwrap_model(ddp)`: where a file may get a
# wrapper's module (`bare_module_sources`), tested on its text before any call is asked.
_MAY_UNWRAP = re.compile(r"\.module\b|[\"']module[\"']|unwrap")


@register
class TrainingForwardThroughModule(Rule):
    code = "DDP026"
    name = "training-forward-through-module"
    severity = Severity.ERROR
    summary = "Training forward through `model.module(...)`: backward skips DDP's gradient sync"
    explanation = """\
## What it does
Flags a forward call through the module inside a DDP wrapper (`model.module(x)`, a piece
of it such as `pair.module[0](x)`, or a name bound to one such as `model_without_ddp(x)`,
including a helper's parameter that every caller in the file passes the bare module for,
and a call handing the bare module to a function of another project module that runs
that parameter as a model (`token_logprobs(policy.module, ids)`, the helper calling
`model(ids)`), reported at the call,
and the very name a wrapper of the same function was made around when the wrapper is
bound to another name: `ddp_model = DDP(model, ...)`, then `model(x)`)
whose result flows into `.backward()`; also a method of the inner module that computes
with it (`model.module.compute_loss(x, y)`, `model.module.backbone(x)`, or a submodule
deeper down such as `model.module.encoder.embed(x)`, reported once per function and only
where no earlier call there is; not nn.Module's own `parameters()`, `state_dict()`, ...),
when the function never calls the wrapper itself, nor hands it to a call whose result
reaches the backward (`loss = train_fn(model, x, lc=model.module.lipschitz())` with
`train_fn` picked by name: the wrapper's forward may run there, and the method only adds
a term to the loss). The wrapper may be made in the file or handed back by a project
helper, whole (`model = smart_ddp(net)`) or inside a tuple (`model, optimizer =
setup_model(cfg)`). Evaluation through
`.module` (under `no_grad()`, or never reaching `backward()`) is left alone, and so is
a model frozen whole (`encoder.requires_grad_(False)`, or `requires_grad = False` over
all its parameters): a fixed feature extractor has no gradient for DDP to all-reduce,
and a file that all-reduces the gradients by hand (`dist.all_reduce(p.grad)`): the bare
forward may be its design. So is a forward whose result reaches the backward only
through a detached value: an adversarial attack through `model.module` that returns
`adversarial.detach()` for the wrapper's training forward computes no gradient of the
weights. So is a bypass of a wrapper whose model no optimizer steps: where every optimizer
of the function takes another model's `.parameters()` (`Adam(q_net.parameters())` while
`agent.module.embed(x)` only builds the Q network's input), the bypassed replicas never
change.

## Why is this bad?
DDP all-reduces gradients from hooks that its own `forward()` arms. A forward that bypasses
the wrapper leaves them unarmed: `backward()` computes only local gradients, each rank
steps with its own, and the replicas silently drift apart. No error is raised.

## Example
```python
model = DDP(net, device_ids=[local_rank])
loss = criterion(model.module(x), y)
loss.backward()
```

## Use instead
```python
loss = criterion(model(x), y)
loss.backward()
```

## Fix safety
For `model.module(...)` written out, the fix calls `model(...)` instead. It is unsafe:
the wrapper's forward now runs (gradient sync, buffer broadcast), which is the point but
changes behaviour, e.g. under `find_unused_parameters=False` with unused parameters.

## References
- https://pytorch.org/docs/stable/notes/ddp.html
- https://pytorch.org/docs/stable/generated/torch.nn.parallel.DistributedDataParallel.html
"""
    fixable = Applicability.UNSAFE
    flag = (
        """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def train(net, loader, optimizer, local_rank):
    model = DDP(net, device_ids=[local_rank])
    for x, y in loader:
        logits = model.module(x)
        loss = torch.nn.functional.cross_entropy(logits, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
""",
        """\
import torch
import torch.distributed as dist
import torch.nn as nn

def train_one_epoch(model, loader, optimizer):
    for x, y in loader:
        loss = nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

def main(net, loader, optimizer, local_rank):
    model = nn.parallel.DistributedDataParallel(net, device_ids=[local_rank])
    model_without_ddp = model.module
    train_one_epoch(model_without_ddp, loader, optimizer)
""",
        """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as Wrap

class Trainer:
    def __init__(self, net, rank):
        self.model = Wrap(net, device_ids=[rank])

    def step(self, batch, scaler, optimizer):
        with torch.autocast("cuda"):
            loss = self.model.module(batch).mean()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
""",
    )
    allow = (
        """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def evaluate(model, loader):
    model.eval()
    with torch.no_grad():
        return sum(model(x).sum().item() for x, _ in loader)

def main(net, loader, val_loader, optimizer, local_rank):
    model = DDP(net, device_ids=[local_rank])
    model_without_ddp = model.module
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    if dist.get_rank() == 0:
        print(evaluate(model_without_ddp, val_loader))
""",
        """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def main(net, batch, local_rank):
    model = DDP(net, device_ids=[local_rank])
    with torch.no_grad():
        features = model.module.backbone(batch)
        preview = model.module(batch)
    return features, preview
""",
        """\
import copy
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def train(net, loader, optimizer, local_rank):
    model = DDP(net, device_ids=[local_rank])
    teacher = copy.deepcopy(model.module).eval()
    for x, y in loader:
        with torch.no_grad():
            target = teacher(x)
        loss = torch.nn.functional.mse_loss(model(x), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
""",
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        bypassed: set[tuple[int, str]] = set()  # (function, module inside a wrapper) reported
        # a bare module can be handed on only where the text unwraps or the file wraps
        hands_bare = bool(facts_of(ctx).ddp_wraps) or _MAY_UNWRAP.search(ctx.source) is not None
        for call in ctx.calls:
            if hands_bare and call.args and (handed := _bare_module_handed(ctx, call)):
                if not ctx.memo(_wrapped_without_hand_sync):
                    return  # no wrapper, or gradients all-reduced by hand: bare is the design
                target, sources = handed
                if _bypass_trains(ctx, call, target) and not scope_hands_wrapper_on(
                    ctx, call, target
                ):
                    bypassed.add((id(ctx.scope(call)), ctx.code(target)))
                    yield Finding(
                        call,
                        f"`{ctx.code(call.func)}(...)` runs the forward of "
                        f"`{ctx.code(target)}`, the module inside the DDP wrapper, and the "
                        "training loss comes from it: the wrapper's forward never runs, so "
                        "its backward() leaves each replica's gradients local (the replicas "
                        "drift apart); hand it the DDP model itself",
                        rests_on=sources,
                    )
                continue
            func = call.func
            submodule = None
            if type(func) is cst.Attribute and _through_module(func):
                target = func.value  # `model.module.forward(x)`, `model.module.compute_loss(x)`
            elif type(func) is cst.Attribute and _bare_method(func) and _steps(ctx, call):
                target = func.value  # `model_without_ddp.encode(x)`: the name decides below
            elif type(func) is cst.Attribute and (submodule := _submodule_call(func)):
                target = submodule  # `model.module.encoder.embed(x)`: a submodule of the module
            elif isinstance(func, (cst.Name, cst.Attribute)):
                target = func
            else:
                continue
            direct = type(target) is cst.Attribute and target.attr.value == "module"
            if not direct and type(target) is not cst.Name and not on_self(target):
                continue
            if type(target) is cst.Name and (target.value in ctx.functions or ctx.qualname(target)):
                continue
            sources = bare_module_sources(ctx, target, call)
            if not sources or all(dropped_as_made(ctx, source) for source in sources):
                continue  # `DDP(model).module`: the wrapper never lives (DDP045's finding)
            if not ctx.memo(_wrapped_without_hand_sync):
                return  # no wrapper, or gradients all-reduced by hand: bare is the design
            if not _bypass_trains(ctx, call, target):
                continue
            fix = None
            method = type(func) is cst.Attribute and func.attr.value != "forward"
            if target is not func and method:
                inputs = _method_inputs(ctx, call)
                if inputs == "wrapper" or scope_hands_wrapper_on(ctx, call, target):
                    continue  # `model.module.loss(model(x), y)`: the wrapper's forward ran
                key = (id(ctx.scope(call)), ctx.code(target))
                if submodule is not None and key in bypassed:
                    continue  # a chain of submodules (`get_dense_pe()` too): once per step
                bypassed.add(key)
                yield Finding(
                    call,
                    f"training loss computed by `{ctx.code(func)}(...)`, "
                    f"{'part' if submodule is not None else 'a method'} of the module "
                    "inside the DDP wrapper: the wrapper's forward never runs, so DDP does not "
                    "prepare its gradient all-reduce and backward() leaves each replica's "
                    "gradients local (the replicas drift apart); call it through the wrapper's "
                    "forward (have `forward` compute the loss)",
                    unproven=inputs == "parameter",
                    rests_on=sources,
                )
                continue
            if direct and target is func and type(target) is cst.Attribute:
                fix = FixSpec(
                    "Call the DDP wrapper instead of its `.module`",
                    replacements=((func, ctx.code(target.value)),),
                    applicability=Applicability.UNSAFE,
                )
            wrapper = _wrapper_name(ctx, sources)
            key = (id(ctx.scope(call)), ctx.code(target))
            if on_self(target) and key in bypassed:
                continue  # `self.dis(real)` after `self.dis(fake)`: once per step
            bypassed.add(key)
            if direct:
                what = "the module inside the DDP wrapper"
            elif wrapper is not None:
                what = f"the model the DDP wrapper `{wrapper}` was made around"
                if target is func:
                    fix = FixSpec(
                        f"Call the DDP wrapper `{wrapper}`",
                        replacements=((func, wrapper),),
                        applicability=Applicability.UNSAFE,
                    )
            else:
                what = "the bare module of a DDP model"
            yield Finding(
                call,
                f"training forward through `{ctx.code(target)}`, {what}: its backward() "
                "does not all-reduce gradients, so the replicas drift apart; call the DDP "
                "model itself",
                fix=fix,
                rests_on=sources,
            )


def _bare_module_handed(
    ctx: FileContext, call: cst.Call
) -> tuple[cst.BaseExpression, tuple[cst.CSTNode, ...]] | None:
    """The bare module of a DDP model (`policy.module`, or a name bound to one) that `call`
    hands a function of another project module, which runs that parameter as a model on
    every call (`logp_per_token(batch, policy.module)`), with where it gets the module."""
    candidates = []
    for arg in call.args:
        value = arg.value
        module = type(value) is cst.Attribute and value.attr.value == "module"
        if module or type(value) is cst.Name:
            sources = bare_module_sources(ctx, value, call)
            if sources:
                candidates.append((value, sources))
    if not candidates:
        return None
    project = project_of(ctx)
    if project is None:
        return None
    for param in project.helper_forwarded_params(ctx, call):
        handed = argument_for(call, param)
        for value, sources in candidates:
            if handed is value:
                return value, sources
    return None


def _wrapped_without_hand_sync(ctx: FileContext) -> bool:
    """The file makes a DDP wrapper or gets one from a helper, and does not all-reduce
    gradients by hand. Asked (once per file, `FileContext.memo`) at the first bypass found:
    a helper's answer may need other modules' summaries."""
    facts = facts_of(ctx)
    return bool(facts.ddp_wraps or facts.helper_wraps) and not reduces_gradients_here(ctx)


def _bypass_trains(ctx: FileContext, call: cst.Call, target: cst.BaseExpression) -> bool:
    """`call`, a forward through the bare module `target` (or one handed it), is a training
    step's: the bare module serves a training pass, the bypassed model is trained, and the
    result reaches a `backward()` by its own gradients in a function that never runs the
    wrapper."""
    domain = domain_of(ctx)
    return not (
        bare_apart_from_backward(ctx, target, call)  # bare on the evaluation passes only
        or frozen_whole(ctx, target)  # a frozen encoder: no gradient of it to all-reduce
        or _trains_others_only(ctx, target, call)  # no optimizer steps it: nothing drifts
        or domain.loops.is_evaluation(call)
        or not domain.backward.reaches(call)
        or _detached(ctx, call)  # `fake = generator(z).detach()`: the discriminator's step
        or _stored_into_module(ctx, call, target)  # `m.module.avg = m.module.avg.repeat(2, 1)`
        # `model(x) if sync else model.module(x)`: the bare forward skips the all-reduce
        # on purpose for accumulation micro-steps (like no_sync()).
        or scope_calls_wrapper(ctx, call, target)
    )


def _stored_into_module(ctx: FileContext, call: cst.Call, target: cst.BaseExpression) -> bool:
    """The call's result is assigned, as it stands or indexed and converted, to an
    attribute of the module `target` itself (`net.module.latent_avg =
    net.module.latent_avg.repeat(18, 1)` while loading weights, `net.module.avg =
    net.module.G.mean_latent(n)[0].detach()`): state kept on the model, not a loss computed
    from a forward."""
    statement = ctx.parent(call)
    while isinstance(
        statement, (cst.Subscript, cst.SubscriptElement, cst.Index, cst.Attribute, cst.Call)
    ):
        statement = ctx.parent(statement)  # `m.module.G.mean_latent(n)[0].detach()`
    if type(statement) is not cst.Assign:
        return False
    owner = dotted(target)
    return owner is not None and all(
        (dotted(t.target) or "").startswith(f"{owner}.") for t in statement.targets
    )


def _wrapper_name(ctx: FileContext, sources: tuple[cst.CSTNode, ...]) -> str | None:
    """The one name the DDP constructions among `sources` are bound to (`ddp_model =
    DDP(model, ...)`), when every source is one."""
    names: set[str] = set()
    wraps = facts_of(ctx).ddp_wraps
    for source in sources:
        assign = ctx.parent(source)
        if not (any(source is w for w in wraps) and type(assign) is cst.Assign):
            return None
        names.update(ctx.code(t.target).strip() for t in assign.targets)
    return names.pop() if len(names) == 1 else None


# nn.Module methods that run no forward computation of the model (parameters, state,
# modes, moves), and the accessors models define beside them (`model.device()` to place
# a batch, `dtype`): a call of one through `.module` is no bypass of the wrapper's forward.
_MODULE_API = frozenset(
    {
        "parameters",
        "named_parameters",
        "buffers",
        "named_buffers",
        "children",
        "named_children",
        "modules",
        "named_modules",
        "state_dict",
        "load_state_dict",
        "get_parameter",
        "get_submodule",
        "get_buffer",
        "to",
        "cuda",
        "cpu",
        "half",
        "float",
        "double",
        "bfloat16",
        "type",
        "train",
        "eval",
        "requires_grad_",
        "zero_grad",
        "apply",
        "register_buffer",
        "register_forward_hook",
        "register_forward_pre_hook",
        "register_full_backward_hook",
        "device",
        "get_device",
        "dtype",
    }
)


def _detached(ctx: FileContext, call: cst.Call) -> bool:
    """The forward's result is detached on the spot, through a chain of method calls
    (`generator(z).transpose(0, 1).detach()`, `.data`): no gradient reaches the module."""
    node: cst.CSTNode = call
    while True:
        parent = ctx.parent(node)
        if type(parent) is not cst.Attribute or parent.value is not node:
            return False
        if parent.attr.value in ("detach", "detach_", "data"):
            return True
        outer = ctx.parent(parent)
        if type(outer) is not cst.Call or outer.func is not parent:
            return False
        node = outer


def _bare_method(func: cst.Attribute) -> bool:
    """`name.method` for a method that computes with a model (not one of nn.Module's own
    parameter, state or mode methods, nor the wrapper's `.module`) called on a plain name,
    which may hold the module inside a DDP wrapper (`model_without_ddp.query_forward(x)`)."""
    return (
        type(func.value) is cst.Name
        and func.value.value != "self"  # `self.gen(x)`: an attribute holding a model
        and func.attr.value != "module"
        and func.attr.value not in _MODULE_API
    )


def _steps(ctx: FileContext, call: cst.Call) -> bool:
    """The function running `call` steps something (`optimizer.step()`, `scaler.step(opt)`,
    `self.optimizer_step()`): its gradients update weights. A backward for a saliency map
    or Grad-CAM in an evaluation helper updates nothing."""
    return ctx.model.frame(call) in ctx.memo(_stepping_frames)


def _stepping_frames(ctx: FileContext) -> frozenset[cst.CSTNode]:
    """The frames whose code calls something named for a step, found once per file (asked
    for each method call on a name, a file's most common call)."""
    return frozenset(
        ctx.model.frame(c) for c in ctx.calls if "step" in (dotted(c.func) or "").rpartition(".")[2]
    )


def _trains_others_only(ctx: FileContext, target: cst.BaseExpression, at: cst.CSTNode) -> bool:
    """Every optimizer the file builds, each in the function of the forward at `at`,
    takes `<model>.parameters()` of a model other than the one `target` reaches (`agent`
    of `agent.module`), followed through names, DDP wraps and `.to(...)`-style calls
    (`model_without_ddp = model.module` is the same model): the bypassed model is stepped
    by no optimizer here (it only builds another model's input), so its replicas cannot
    drift apart."""
    loops = domain_of(ctx).loops
    optimizers = [call for call in ctx.calls if loops.builds_optimizer(call)]
    bypassed = _model_roots(ctx, target, at)
    if not bypassed or not optimizers or type(target) is not cst.Attribute:
        return False  # only `x.module` of a wrapper in sight
    for optimizer in optimizers:
        if ctx.scope(optimizer) is not ctx.scope(at):
            return False  # built elsewhere, over a model handed around out of sight
        params = argument(optimizer, 0, "params")
        if not (
            type(params) is cst.Call
            and type(params.func) is cst.Attribute
            and params.func.attr.value == "parameters"
        ):
            return False
        owner = _model_roots(ctx, params.func.value, optimizer)
        if not owner or owner & bypassed:
            return False
    return True


def _model_roots(
    ctx: FileContext, expr: cst.BaseExpression, at: cst.CSTNode, depth: int = 3
) -> set[str] | None:
    """The names a model expression is built from (`agent` for `agent.module`,
    `self.model` for `self.model.module`), and those of the values it holds: through
    names, the model a DDP wrap is given, `net.to(device)`; a construction adds none.
    None when some value is out of sight (`getattr(model, "module", model)`)."""
    if type(expr) is cst.Call:
        called = ctx.call_name(expr)
        if (called in DDP_CLASSES or called == "torch.compile") and expr.args:
            expr = expr.args[0].value
        elif type(expr.func) is cst.Attribute and ctx.qualname(expr.func) is None:
            expr = expr.func.value  # `net.to(device)`, `net.cuda()`
        elif type(expr.func) is cst.Name and expr.func.value != "getattr":
            return set()  # `DQN(...)`: a model built here
        else:
            return None
        return _model_roots(ctx, expr, at, depth)
    name = dotted(expr)
    if name is None:
        return None
    roots = {name.removesuffix(".module")}
    if depth == 0:
        return roots
    for value in ctx.resolver.values(expr, at):
        if value.expr is expr:
            continue
        found = _model_roots(ctx, value.expr, value.at, depth - 1)
        if found is None:
            return None
        roots |= found
    return roots


def _submodule_call(func: cst.Attribute) -> cst.Attribute | None:
    """`x.module` of a call of a submodule of the module inside a wrapper, or of a method
    of one (`x.module.encoder.embed(t)`, `x.module.heads.cls.forward(h)`), where no name
    on the way is one of nn.Module's own methods (`x.module.encoder.parameters()`)."""
    node = func.value
    while type(node) is cst.Attribute:
        if node.attr.value in _MODULE_API:
            return None
        if type(node.value) is cst.Attribute and node.value.attr.value == "module":
            return node.value if func.attr.value not in _MODULE_API else None
        node = node.value
    return None


def _through_module(func: cst.Attribute) -> bool:
    """`x.module.forward` or `x.module.<method>` that computes with the model (not one of
    nn.Module's own parameter, state or mode methods)."""
    if func.attr.value == "forward":
        return True
    inner = func.value
    return (
        type(inner) is cst.Attribute
        and inner.attr.value == "module"
        and func.attr.value not in _MODULE_API
    )


def _method_inputs(ctx: FileContext, call: cst.Call) -> str | None:
    """Where the arguments of a method called through `.module` come from: "wrapper" when
    one is computed by a forward of a DDP model (the wrapper ran, the method only scores
    its output), "parameter" when one is a parameter of the function (its caller may have
    run the wrapper), else None."""
    facts = facts_of(ctx)
    backward = domain_of(ctx).backward
    from_parameter = False
    for arg in call.args:
        value = arg.value
        if type(value) is cst.Name and any(
            b.kind == "param" for b in ctx.resolver.reaching(value.value, call)
        ):
            from_parameter = True
        for step in [Step(value, call), *backward.dependencies(value, call)]:
            for node in ctx.walk(step.node):
                if (
                    type(node) is cst.Call
                    and isinstance(node.func, (cst.Name, cst.Attribute))
                    and ctx.qualname(node.func) is None
                    and facts.is_ddp_model(node.func, step.at)
                ):
                    return "wrapper"
    return "parameter" if from_parameter else None

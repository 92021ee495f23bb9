"""DDP046: parameters frozen (`requires_grad = False`) after the model was wrapped in DDP."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from ddplint.context import FileContext
from ddplint.diagnostics import Severity
from ddplint.domain import domain_of
from ddplint.domain.ddp_facts import argument, facts_of, is_false, keyword
from ddplint.domain.ddp_steps import ddp_backward, trains_ddp_model
from ddplint.domain.frozen_modules import freezes
from ddplint.domain.runners import one_process
from ddplint.rule import Finding, Rule, register


@register
class FrozenAfterWrap(Rule):
    code = "DDP046"
    name = "frozen-after-wrap"
    severity = Severity.ERROR
    summary = "Parameters frozen after the DDP wrap: the reducer still waits for their gradients"
    explanation = """\
## What it does
Flags `p.requires_grad = False` (in a loop over a module's `parameters()`) and
`module.requires_grad_(False)` on the model a DDP wrapper of the same function already
holds (the wrapper, its `.module`, or the module passed to it), after the wrap, when the
wrap does not pass `find_unused_parameters=True` and the file trains (calls `backward()`).
Only part of the model frozen counts (a submodule, or parameters picked by a test in the
loop): with every parameter frozen (a GAN's discriminator during the generator step, a
DINO teacher) no gradient hook fires and DDP expects nothing. A freeze on the other branch
of the `if` that wraps, and code that runs only when the job
is not distributed, are left alone. Unproven (`--preview`) where no training step in
sight runs the wrapper's forward (every step calls methods of `.module`, which DDP026
reports): the reducer then never waits for any gradient.

## Why is this bad?
DDP records at construction which parameters need gradients and builds its all-reduce
buckets from them. Parameters frozen afterwards never produce a gradient, so their buckets
never become ready: the first backward ends with the reduction unfinished, and the next
forward raises "Expected to have finished reduction in the prior iteration before starting
a new one". (Unfreezing after the wrap is the opposite mistake: the parameters DDP left out
are never averaged.)

## Example
```python
model = DDP(model, device_ids=[local_rank])
for p in model.module.encoder.parameters():
    p.requires_grad = False
```

## Use instead
```python
for p in model.encoder.parameters():
    p.requires_grad = False
model = DDP(model, device_ids=[local_rank])
```
or pass `find_unused_parameters=True` when the frozen set changes during training.

## Fix safety
No fix is offered: moving the wrap may move the optimizer's construction with it.

## References
- https://pytorch.org/docs/stable/generated/torch.nn.parallel.DistributedDataParallel.html
- https://pytorch.org/docs/stable/notes/ddp.html
"""
    flag = (
        """\
import torch
from torch.nn.parallel import DistributedDataParallel as DDP

def main(net, loader, local_rank):
    model = DDP(net.cuda(local_rank), device_ids=[local_rank])
    for p in model.module.backbone.parameters():
        p.requires_grad = False
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
""",
        """\
import torch
from torch.nn.parallel import DistributedDataParallel as DDP

def main(net, loader, local_rank):
    model = DDP(net.cuda(local_rank), device_ids=[local_rank])
    net.backbone.requires_grad_(False)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
""",
        """\
import torch
from torch.nn.parallel import DistributedDataParallel as DDP

def main(net, loader, local_rank, freeze):
    model = DDP(net.cuda(local_rank), device_ids=[local_rank])
    if freeze:
        for name, p in model.named_parameters():
            if "encoder" in name:
                p.requires_grad = False
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
""",
    )
    allow = (
        """\
import torch
from torch.nn.parallel import DistributedDataParallel as DDP

def main(net, loader, local_rank):
    for p in net.backbone.parameters():
        p.requires_grad = False
    model = DDP(net.cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
""",
        """\
import torch
from torch.nn.parallel import DistributedDataParallel as DDP

def main(net, loader, local_rank):
    model = DDP(net.cuda(local_rank), device_ids=[local_rank], find_unused_parameters=True)
    for p in model.module.backbone.parameters():
        p.requires_grad = False
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
""",
        """\
import torch
from torch.nn.parallel import DistributedDataParallel as DDP

def main(net, loader, local_rank, distributed):
    if distributed:
        model = DDP(net.cuda(local_rank), device_ids=[local_rank])
    else:
        model = net.cuda()
        for p in model.backbone.parameters():
            p.requires_grad = False
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
""",
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        facts = facts_of(ctx)
        if not facts.ddp_wraps or not domain_of(ctx).backward.sites:
            return
        for freeze in freezes(ctx):
            if not freeze.partial:
                continue  # the whole model (a GAN's discriminator, a DINO teacher): no hook fires
            wrap = _earlier_wrap(ctx, freeze.node, freeze.module)
            if wrap is None or one_process(ctx, freeze.node):
                continue
            yield Finding(
                freeze.node,
                f"parameters of `{ctx.code(freeze.module)}` frozen after the model was wrapped "
                f"in `{ctx.code(wrap.func)}(...)` without find_unused_parameters=True: DDP "
                "still waits for their gradients, so the first backward leaves its reduction "
                "unfinished and the next iteration fails with 'Expected to have finished "
                "reduction in the prior iteration'; freeze before wrapping",
                unproven=not steps_through_wrapper(ctx),  # else the reducer never engages
            )


def steps_through_wrapper(ctx: FileContext) -> bool:
    """A training step in sight runs the DDP wrapper's forward (a `backward()` whose step
    calls the DDP model or hands it to a call, or a call of a training function handed
    it): only then does DDP's reducer wait for the frozen parameters' gradients. A file
    whose steps all call methods of `.module` never engages the reducer."""
    return any(ddp_backward(ctx, site.call) for site in domain_of(ctx).backward.sites) or any(
        trains_ddp_model(ctx, call) for call in ctx.calls
    )


def _earlier_wrap(
    ctx: FileContext, node: cst.CSTNode, module: cst.BaseExpression
) -> cst.Call | None:
    """The DDP wrap of `node`'s function, before it and on a path that reaches it (not on
    the other branch of an `if`), that holds the frozen module: the wrapper, its
    `.module`, or the module it was given; None if a later wrap replaces it or the wrap
    may pass over unused parameters."""
    facts = facts_of(ctx)
    root = _root(module)
    function = ctx.enclosing_function(node)
    found = None
    for wrap in facts.ddp_wraps:
        if ctx.enclosing_function(wrap) is not function:
            continue
        if not ctx.before(wrap, node):
            return None  # a wrap after the freeze: the model is wrapped again
        if _exclusive(ctx, wrap, node) or not _holds(ctx, root, node, wrap):
            continue
        unused = keyword(wrap, "find_unused_parameters")
        if unused is not None and not is_false(unused.value):
            return None
        found = wrap
    return found


def _root(expr: cst.BaseExpression) -> cst.BaseExpression:
    """`model.module` of `model.module.encoder.blocks`: the chain up to its `.module`, or
    its first name."""
    current = expr
    while isinstance(current, (cst.Attribute, cst.Subscript)):
        if type(current) is cst.Attribute and current.attr.value == "module":
            return current
        current = current.value
    return current


def _holds(ctx: FileContext, root: cst.BaseExpression, at: cst.CSTNode, wrap: cst.Call) -> bool:
    facts = facts_of(ctx)
    if type(root) is cst.Attribute:  # `x.module`
        return facts.is_ddp_model(root.value, at)
    if type(root) is not cst.Name:
        return False
    if facts.is_ddp_model(root, at):
        return True
    given = argument(wrap, 0, "module")
    while type(given) is cst.Call and type(given.func) is cst.Attribute:
        given = given.func.value  # `net.cuda(local_rank)`, `net.to(device)`
    if type(given) is cst.Name and given.value == root.value:
        here = {id(b) for b in ctx.resolver.reaching(root.value, at)}
        there = {id(b) for b in ctx.resolver.reaching(root.value, wrap)}
        return bool(here) and here == there
    values = ctx.resolver.values(root, at)
    return any(
        type(v.expr) is cst.Attribute
        and v.expr.attr.value == "module"
        and facts.is_ddp_model(v.expr.value, v.at)
        for v in values
    )


def _exclusive(ctx: FileContext, first: cst.CSTNode, second: cst.CSTNode) -> bool:
    """`first` and `second` lie on different branches of one `if`."""
    for ancestor in ctx.ancestors(first):
        if type(ancestor) is cst.If and ctx.is_inside(second, ancestor):
            in_body = ctx.is_inside(first, ancestor.body)
            return in_body != ctx.is_inside(second, ancestor.body)
    return False

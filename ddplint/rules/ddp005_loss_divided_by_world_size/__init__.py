"""DDP005: the loss that reaches backward() is divided by the world size."""

from __future__ import annotations

import re
from collections.abc import Iterator

import libcst as cst

from ddplint.context import FileContext
from ddplint.diagnostics import Severity
from ddplint.domain import domain_of
from ddplint.domain.ddp_facts import facts_of
from ddplint.domain.gradient_sync import reduces_gradients_by_hand, reduces_gradients_here
from ddplint.names import dotted
from ddplint.rule import Finding, Rule, register

_ACCUMULATION = re.compile(r"accum|grad_steps|update_freq|micro", re.IGNORECASE)


def _factors(expr: cst.BaseExpression) -> list[cst.BaseExpression]:
    if type(expr) is cst.BinaryOperation and type(expr.operator) is cst.Multiply:
        return [*_factors(expr.left), *_factors(expr.right)]
    return [expr]


def _divides_by_world(ctx: FileContext, divisor: cst.BaseExpression) -> bool:
    """`world_size`, `dist.get_world_size()`, `int(os.environ["WORLD_SIZE"])`, or
    `world_size * accum_steps` (the other factors accumulation counts). A name counts only
    through plain assignments: after `steps //= world_size`, `steps` is a per-rank
    accumulation count (nanoGPT), not the world size."""
    is_world_size = domain_of(ctx).ranks.is_world_size
    factors = _factors(divisor)
    world = [f for f in factors if is_world_size(f)]
    others = [f for f in factors if not is_world_size(f)]
    return bool(world) and all(
        (name := dotted(f)) is not None and bool(_ACCUMULATION.search(name)) for f in others
    )


def _holds_item(ctx: FileContext, expr: cst.BaseExpression) -> bool:
    """A Python number: `.item()`, `.tolist()` of a tensor."""
    return any(
        type(node) is cst.Call
        and type(node.func) is cst.Attribute
        and node.func.attr.value in ("item", "tolist")
        for node in ctx.walk(expr)
    )


_DIVIDE_METHODS = frozenset({"div", "div_", "divide", "divide_", "true_divide", "true_divide_"})
_MULTIPLY_METHODS = frozenset({"mul", "mul_", "multiply", "multiply_"})


def _divisions(ctx: FileContext, node: cst.CSTNode) -> bool:
    """`loss / world_size` (of a tensor), `loss /= world_size`, and the same written as a
    product with the reciprocal (`loss * (1 / world_size)`, `loss *= 1.0 / world_size`) or
    as a tensor method (`loss.div(world_size)`, `loss.mul_(1 / world_size)`,
    `torch.div(loss, world_size)`)."""
    if type(node) is cst.BinaryOperation:
        if type(node.operator) is cst.Divide:
            if isinstance(node.left, (cst.Integer, cst.Float)):
                return False  # `1 / world_size`: a number, the product is judged
            return _divides_by_world(ctx, node.right) and not _holds_item(ctx, node.left)
        if type(node.operator) is cst.Multiply:
            return any(
                _reciprocal_of_world(ctx, factor) for factor in (node.left, node.right)
            ) and not _holds_item(ctx, node)
        return False
    if type(node) is cst.AugAssign:
        if type(node.operator) is cst.DivideAssign:
            return _divides_by_world(ctx, node.value)
        return type(node.operator) is cst.MultiplyAssign and _reciprocal_of_world(ctx, node.value)
    if type(node) is cst.Call and node.args:
        first = node.args[0].value
        if ctx.call_name(node) in ("torch.div", "torch.true_divide") and len(node.args) > 1:
            return _divides_by_world(ctx, node.args[1].value) and not _holds_item(ctx, first)
        if type(node.func) is not cst.Attribute or _holds_item(ctx, node.func.value):
            return False
        method = node.func.attr.value
        if method in _DIVIDE_METHODS:
            return _divides_by_world(ctx, first)
        return method in _MULTIPLY_METHODS and _reciprocal_of_world(ctx, first)
    return False


def _in_place(ctx: FileContext, loss: cst.BaseExpression) -> list[cst.Call]:
    """The in-place method calls on the differentiated name earlier in its function
    (`loss.mul_(1 / world_size)` as a statement of its own): they change the value the
    backward reads without binding it again."""
    if type(loss) is not cst.Name:
        return []
    frame = ctx.model.frame(loss)
    found = []
    for call in ctx.model.calls_by_frame(frame):
        func = call.func
        if (
            type(func) is cst.Attribute
            and func.attr.value.endswith("_")
            and type(func.value) is cst.Name
            and func.value.value == loss.value
            and type(ctx.parent(call)) is cst.Expr
            and ctx.before(call, loss)
        ):
            found.append(call)
    return found


def _reciprocal_of_world(ctx: FileContext, expr: cst.BaseExpression) -> bool:
    """`1 / world_size`, `1.0 / dist.get_world_size()`."""
    return (
        type(expr) is cst.BinaryOperation
        and type(expr.operator) is cst.Divide
        and isinstance(expr.left, (cst.Integer, cst.Float))
        and float(expr.left.value) == 1.0
        and _divides_by_world(ctx, expr.right)
    )


@register
class LossDividedByWorldSize(Rule):
    code = "DDP005"
    name = "loss-divided-by-world-size"
    severity = Severity.ERROR
    summary = "Loss divided by the world size before backward(): DDP already averages gradients"
    explanation = """
## What it does
Flags a division by the world size (`dist.get_world_size()`, `os.environ["WORLD_SIZE"]`, or
a variable holding them) of a value that flows into `.backward()`: `loss / world_size`,
`loss /= world_size`, `scaler.scale(loss / ws).backward()`, the same written with the
reciprocal (`loss * (1 / ws)`, `loss *= 1.0 / ws`) or a tensor method (`loss.div(ws)`,
`torch.div(loss, ws)`, `loss.mul_(1 / ws)` before the backward), also through a helper of
the same file that returns the divided loss. Averaging a logged metric after `all_reduce`,
dividing `.item()` floats, and dividing by the number of accumulation steps are not
flagged; nor is a script that all-reduces `.grad` by hand, nor a loss whose model is not a
DDP wrapper in sight where the script or a project module it imports hands gradients to a
reduction (a project wrapper whose hooks sum them: `allreduce_async(p.grad.data)`), nor a
loss computed only from
plain modules built in the file that no DDP wrap takes (a reference model of a parity test,
divided so that its gradients match DDP's averaged ones; also through the lists its outputs
are collected in).

## Why is this bad?
DistributedDataParallel averages gradients across ranks during `backward()` (it sums them
and divides by the world size). Dividing the loss by the world size as well divides every
gradient a second time: the effective learning rate shrinks by a factor of world_size, and
runs with more GPUs train worse.

## Example
```python
loss = criterion(model(x), y) / dist.get_world_size()
loss.backward()
```

## Use instead
```python
loss = criterion(model(x), y)
loss.backward()
```

## Fix safety
No fix is offered: the author may have tuned the learning rate around the division.

## References
- https://pytorch.org/docs/stable/notes/ddp.html
- https://pytorch.org/docs/stable/generated/torch.nn.parallel.DistributedDataParallel.html
"""
    flag = (
        """
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def train_step(model, batch, criterion, optimizer):
    x, y = batch
    loss = criterion(model(x), y) / dist.get_world_size()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
        """
import os
import torch
import torch.distributed as dist

world_size = int(os.environ["WORLD_SIZE"])

def step(model, x, y, scaler, optimizer):
    with torch.autocast("cuda", dtype=torch.float16):
        loss = torch.nn.functional.cross_entropy(model(x), y)
    loss /= world_size
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
""",
        """
import torch.distributed as dist

def compute_loss(model, x, y):
    out = model(x)
    return (out - y).pow(2).mean() / dist.get_world_size()

def train(model, loader, optimizer):
    for x, y in loader:
        loss = compute_loss(model, x, y)
        loss.backward()
        optimizer.step()
""",
    )
    allow = (
        """
import torch
import torch.distributed as dist

def train(model, loader, optimizer, accum_steps):
    for i, (x, y) in enumerate(loader):
        loss = torch.nn.functional.mse_loss(model(x), y) / accum_steps
        loss.backward()
        if (i + 1) % accum_steps == 0:
            optimizer.step()
            optimizer.zero_grad()
""",
        """
import torch
import torch.distributed as dist

def train(model, loader, optimizer):
    world_size = dist.get_world_size()
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        reduced = loss.detach().clone()
        dist.all_reduce(reduced)
        reduced /= world_size
        avg = loss.item() / world_size
""",
        """
import torch
import torch.distributed as dist

def train(model, loader, optimizer):
    for x, y in loader:
        loss = model(x).sub(y).pow(2).mean() / dist.get_world_size()
        loss.backward()
        for p in model.parameters():
            dist.all_reduce(p.grad)
        optimizer.step()
""",
        """
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def train(model, loader, optimizer, cfg):
    model = DDP(model)
    for x in loader:
        if cfg.use_fsdp:
            loss = model(x).mean()
        else:
            with torch.autocast("cuda"):
                loss = model(x).mean()
        loss.backward()
        optimizer.step()
        dist.all_reduce(loss)
        loss = loss / cfg.world_size
        print(f"loss {loss.item():.4f}")
""",
        """
import os
import torch
from torch.nn.parallel import DistributedDataParallel as DDP

ddp_world_size = int(os.environ["WORLD_SIZE"])
gradient_accumulation_steps = 40
gradient_accumulation_steps //= ddp_world_size

def train(model, get_batch, optimizer):
    for micro_step in range(gradient_accumulation_steps):
        x, y = get_batch()
        loss = model(x, y) / gradient_accumulation_steps
        loss.backward()
    optimizer.step()
""",
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        if reduces_gradients_here(ctx):
            return
        reported: set[cst.CSTNode] = set()
        by_hand: bool | None = None
        backward = domain_of(ctx).backward
        loops = domain_of(ctx).loops
        for site in backward.sites:
            # A division with gradients off (`with torch.no_grad(): loss /= world_size`,
            # for the logged mean) scales no gradient: backward() starts from 1.
            divided = [
                node
                for node in (*(s.node for s in backward.flow(site)), *_in_place(ctx, site.loss))
                if node not in reported and _divisions(ctx, node) and not loops.is_evaluation(node)
            ]
            forwards = backward.forwards(site) if divided else []
            facts = facts_of(ctx)
            if forwards and all(facts.is_plain_model(f.model, f.call) for f in forwards):
                continue  # a reference model DDP does not average: dividing matches DDP's
            if divided and not any(facts.is_ddp_model(f.model, f.call) for f in forwards):
                if by_hand is None:
                    by_hand = reduces_gradients_by_hand(ctx)
                if by_hand:
                    continue  # a project wrapper may sum the gradients: dividing averages
            for node in dict.fromkeys(divided):
                reported.add(node)
                yield Finding(
                    node,
                    "Loss divided by the world size before backward(): DDP already "
                    "averages gradients across ranks, so this shrinks every gradient by a "
                    "factor of world_size",
                    # After the backward in the source: it reaches the next pass's backward
                    # only if that pass does not compute the loss anew, which a branch the
                    # analysis cannot follow decides (a logged average, usually).
                    unproven=ctx.before(site.call, node),
                )

"""DDP005: the loss that reaches backward() is divided by the world size."""

from __future__ import annotations

import re
from collections.abc import Iterator

import libcst as cst

from ddplint.context import FileContext
from ddplint.diagnostics import Severity
from ddplint.facts import strip_conversion
from ddplint.names import dotted
from ddplint.rule import Finding, Rule, register

_ACCUMULATION = re.compile(r"accum|grad_steps|update_freq|micro", re.IGNORECASE)


def _factors(expr: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Multiply):
        return [*_factors(expr.left), *_factors(expr.right)]
    return [expr]


def _is_world_size(ctx: FileContext, expr: cst.BaseExpression, depth: int = 3) -> bool:
    """Like `facts.is_world_size`, but a name is the world size only through a plain
    assignment: `steps //= world_size` makes `steps` a per-rank accumulation count
    (nanoGPT's `gradient_accumulation_steps //= ddp_world_size`), not the world size."""
    expr = strip_conversion(expr)
    if isinstance(expr, (cst.Call, cst.Subscript)):
        return ctx.facts.is_world_size(expr)
    if isinstance(expr, cst.IfExp):
        return _is_world_size(ctx, expr.body, depth) or _is_world_size(ctx, expr.orelse, depth)
    if ctx.facts.is_world_size(expr, depth=0):
        return True
    name = dotted(expr)
    if name is None or depth == 0:
        return False
    return any(
        b.kind == "assign" and b.value is not expr and _is_world_size(ctx, b.value, depth - 1)
        for b in ctx.bindings_of(name, expr)
    )


def _divides_by_world(ctx: FileContext, divisor: cst.BaseExpression) -> bool:
    """`world_size`, `dist.get_world_size()`, `int(os.environ["WORLD_SIZE"])`, or
    `world_size * accum_steps` (the other factors accumulation counts)."""
    if _is_world_size(ctx, divisor):
        return True
    factors = _factors(divisor)
    if len(factors) < 2:
        return False
    world = [f for f in factors if _is_world_size(ctx, f)]
    others = [f for f in factors if not _is_world_size(ctx, f)]
    return bool(world) and all(
        (name := dotted(f)) is not None and bool(_ACCUMULATION.search(name)) for f in others
    )


def _holds_item(ctx: FileContext, expr: cst.BaseExpression) -> bool:
    """A Python number: `.item()`, `float(...)` of a tensor."""
    for node in ctx.walk(expr):
        if (
            isinstance(node, cst.Call)
            and isinstance(node.func, cst.Attribute)
            and node.func.attr.value in ("item", "tolist")
        ):
            return True
    return False


class _Tracer:
    """Follows what flows into a backward() call, through assignments in the same scope
    and the return values of functions of this file."""

    def __init__(self, ctx: FileContext, reduced: set[str]) -> None:
        self.ctx = ctx
        self.reduced = reduced
        self.seen: set[int] = set()
        self.found: list[cst.CSTNode] = []

    def expr(self, expr: cst.BaseExpression, at: cst.CSTNode, depth: int = 8) -> None:
        """Follow `expr` through the operations that keep it the differentiated value."""
        if id(expr) in self.seen or depth < 0:
            return
        self.seen.add(id(expr))
        ctx = self.ctx
        if isinstance(expr, cst.BinaryOperation):
            if isinstance(expr.operator, cst.Divide):
                if (
                    _divides_by_world(ctx, expr.right)
                    and not _holds_item(ctx, expr.left)
                    and not self._reduced_metric(expr.left)
                ):
                    self.found.append(expr)
                self.expr(expr.left, at, depth - 1)
            else:
                self.expr(expr.left, at, depth - 1)
                self.expr(expr.right, at, depth - 1)
        elif isinstance(expr, cst.UnaryOperation):
            self.expr(expr.expression, at, depth - 1)
        elif isinstance(expr, cst.Name):
            self.name(expr.value, at, depth - 1)
        elif isinstance(expr, cst.Attribute):
            self.name(dotted(expr), at, depth - 1)
            self.expr(expr.value, at, depth - 1)
        elif isinstance(expr, cst.Subscript):
            self.expr(expr.value, at, depth - 1)
        elif isinstance(expr, (cst.Tuple, cst.List)):
            for element in expr.elements:
                self.expr(element.value, at, depth - 1)
        elif isinstance(expr, cst.Dict):
            for element in expr.elements:
                if isinstance(element, cst.DictElement):
                    self.expr(element.value, at, depth - 1)
        elif isinstance(expr, cst.IfExp):
            self.expr(expr.body, at, depth - 1)
            self.expr(expr.orelse, at, depth - 1)
        elif isinstance(expr, cst.Call):
            func = expr.func
            if isinstance(func, cst.Attribute) and ctx.call_name(expr) is None:
                # `loss.mean()`, `losses.sum()`, `loss_dict.values()`
                self.expr(func.value, at, depth - 1)
            elif isinstance(func, cst.Name) and func.value in ctx.functions:
                self._returns(expr, depth - 1)
            elif (isinstance(func, cst.Name) and func.value == "sum") or ctx.call_name(expr) in (
                "torch.stack",
                "torch.sum",
                "torch.mean",
            ):
                for arg in expr.args:
                    self.expr(arg.value, at, depth - 1)

    def name(self, name: str | None, at: cst.CSTNode, depth: int) -> None:
        if name is None or depth < 0:
            return
        ctx = self.ctx
        bindings = ctx.bindings.get(name, [])
        scope = ctx.scope(at)
        preceding = [
            b
            for b in bindings
            if b.scope is scope
            and b.kind in ("assign", "augassign")
            and ctx.before(b.statement, at)
        ]
        # The last plain assignment and every augmented one after it.
        chain = []
        for binding in reversed(preceding):
            chain.append(binding)
            if binding.kind == "assign":
                break
        for binding in chain:
            statement = binding.statement
            if binding.kind == "augassign":
                if (
                    isinstance(statement, cst.AugAssign)
                    and isinstance(statement.operator, cst.DivideAssign)
                    and _divides_by_world(ctx, statement.value)
                    and name not in self.reduced
                ):
                    self.found.append(statement)
            else:
                self.expr(binding.value, statement, depth)

    def _returns(self, call: cst.Call, depth: int) -> None:
        ctx = self.ctx
        defs = ctx.functions.get(call.func.value, [])  # type: ignore[attr-defined]
        if len(defs) != 1 or depth < 0:
            return
        func = defs[0]
        for node in ctx.walk(func):
            if isinstance(node, cst.Return) and node.value is not None and ctx.scope(node) is func:
                self.expr(node.value, node, depth)

    def _reduced_metric(self, expr: cst.BaseExpression) -> bool:
        name = dotted(expr)
        return name is not None and name in self.reduced


def _backward_inputs(ctx: FileContext) -> Iterator[tuple[cst.Call, cst.BaseExpression]]:
    """(backward call, expression differentiated) for `x.backward()`,
    `scaler.scale(x).backward()`, `torch.autograd.backward(x)`, `accelerator.backward(x)`."""
    for call in ctx.method_calls("backward"):
        func = call.func
        receiver = func.value  # type: ignore[attr-defined]
        qualified = ctx.call_name(call)
        if qualified == "torch.autograd.backward" or (
            (dotted(receiver) or "").rpartition(".")[2] in ("accelerator", "fabric")
        ):
            if call.args:
                yield call, call.args[0].value
            continue
        if (
            isinstance(receiver, cst.Call)
            and isinstance(receiver.func, cst.Attribute)
            and receiver.func.attr.value == "scale"
            and receiver.args
        ):
            yield call, receiver.args[0].value
            continue
        yield call, receiver


def _all_reduced_names(ctx: FileContext) -> set[str]:
    """Names passed to an all_reduce: metrics averaged across ranks, not losses."""
    names = set()
    for call in ctx.calls_to("torch.distributed.all_reduce", "torch.distributed.reduce"):
        if call.args:
            name = dotted(call.args[0].value)
            if name is not None:
                names.add(name)
    return names


def _averages_gradients_by_hand(ctx: FileContext) -> bool:
    """The script all-reduces `.grad` itself (no DDP averaging): dividing the loss by the
    world size is then a legitimate way to average."""
    for call in ctx.calls_to("torch.distributed.all_reduce", "torch.distributed.reduce"):
        for arg in call.args:
            if any(n.endswith(".grad") or n == "grad" for n in ctx.names_in(arg.value)):
                return True
    return False


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
`loss /= world_size`, `scaler.scale(loss / ws).backward()`, also through a helper of the
same file that returns the divided loss. Averaging a logged metric after `all_reduce`,
dividing `.item()` floats, and dividing by the number of accumulation steps are not
flagged; nor is a script that all-reduces `.grad` by hand.

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
        if _averages_gradients_by_hand(ctx):
            return
        reduced = _all_reduced_names(ctx)
        reported: set[int] = set()
        for call, value in _backward_inputs(ctx):
            tracer = _Tracer(ctx, reduced)
            tracer.expr(value, call)
            for node in tracer.found:
                if id(node) in reported:
                    continue
                reported.add(id(node))
                yield Finding(
                    node,
                    "Loss divided by the world size before backward(): DDP already averages "
                    "gradients across ranks, so this shrinks every gradient by a factor of "
                    "world_size",
                )

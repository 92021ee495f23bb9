"""DDP026: training forward through `model.module(...)` of a DDP model."""

from __future__ import annotations

import re
from collections.abc import Iterator

import libcst as cst

from ddplint.context import FileContext
from ddplint.diagnostics import Applicability, Severity
from ddplint.facts import argument, last_name, string_value
from ddplint.names import dotted
from ddplint.rule import Finding, FixSpec, Rule, register

_UNWRAP_FUNCTION = re.compile(r"unwrap|de_?parallel|without_ddp|bare_model")
_NO_GRAD = frozenset({"torch.no_grad", "torch.inference_mode"})
_MAX_DEPTH = 4


def _names(ctx: FileContext, node: cst.CSTNode) -> set[str]:
    return {n.value for n in ctx.walk(node) if isinstance(n, cst.Name)}


@register
class TrainingForwardThroughModule(Rule):
    code = "DDP026"
    name = "training-forward-through-module"
    severity = Severity.ERROR
    summary = "Training forward through `model.module(...)`: backward skips DDP's gradient sync"
    explanation = """\
## What it does
Flags a forward call through the module inside a DDP wrapper (`model.module(x)`, or a name
bound to it such as `model_without_ddp(x)`, including a helper's parameter that every
caller in the file passes the bare module for) whose result flows into `.backward()`.
Evaluation through `.module` (under `no_grad()`, or never reaching `backward()`) is left
alone.

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
        if not ctx.facts.ddp_wraps:
            return
        for call in ctx.calls:
            func = call.func
            if isinstance(func, cst.Attribute) and func.attr.value == "forward":
                target = func.value
            elif isinstance(func, (cst.Name, cst.Attribute)):
                target = func
            else:
                continue
            direct = isinstance(target, cst.Attribute) and target.attr.value == "module"
            if not direct and not isinstance(target, cst.Name):
                continue
            if not direct and (target.value in ctx.functions or ctx.qualname(target)):
                continue
            if not self._bare_of_ddp(ctx, target, call, _MAX_DEPTH):
                continue
            if self._under_no_grad(ctx, call) or not self._reaches_backward(ctx, call):
                continue
            if self._scope_forwards_wrapper(ctx, call):
                # `model(x) if sync else model.module(x)`: the bare forward skips the
                # all-reduce on purpose for accumulation micro-steps (like no_sync()).
                continue
            fix = None
            if direct and target is func:
                fix = FixSpec(
                    "Call the DDP wrapper instead of its `.module`",
                    replacements=((func, ctx.code(target.value)),),
                    applicability=Applicability.UNSAFE,
                )
            what = (
                "the module inside the DDP wrapper" if direct else "the bare module of a DDP model"
            )
            yield Finding(
                call,
                f"training forward through `{ctx.code(target)}`, {what}: its backward() "
                "does not all-reduce gradients, so the replicas drift apart; call the DDP "
                "model itself",
                fix=fix,
            )

    def _bare_of_ddp(
        self, ctx: FileContext, expr: cst.BaseExpression, at: cst.CSTNode, depth: int
    ) -> bool:
        """`expr` holds the module inside a DDP wrapper at `at`, on every path we see."""
        facts = ctx.facts
        if isinstance(expr, cst.Attribute) and expr.attr.value == "module":
            return facts.is_ddp_model(expr.value, at)
        if isinstance(expr, cst.IfExp):
            return self._bare_of_ddp(ctx, expr.body, at, depth) or self._bare_of_ddp(
                ctx, expr.orelse, at, depth
            )
        if isinstance(expr, cst.Call):
            func = last_name(expr.func) or ""
            first = argument(expr, 0, "model")
            if first is None:
                return False
            if func == "getattr":
                second = argument(expr, 1, "name")
                return (
                    second is not None
                    and string_value(second) == "module"
                    and facts.is_ddp_model(first, at)
                )
            return bool(_UNWRAP_FUNCTION.search(func)) and facts.is_ddp_model(first, at)
        name = dotted(expr)
        if name is None or depth == 0:
            return False
        binding = facts.reaching_binding(name, at)
        if binding is None:
            return False
        if binding.kind == "param":
            args = facts.arguments_for(binding)
            return bool(args) and all(self._bare_of_ddp(ctx, a, a, depth - 1) for a in args)
        if binding.kind != "assign" or binding.value is expr:
            return False
        return self._bare_of_ddp(ctx, binding.value, binding.statement, depth - 1)

    @staticmethod
    def _scope_forwards_wrapper(ctx: FileContext, call: cst.Call) -> bool:
        facts = ctx.facts
        scope = ctx.scope(call)
        for other in ctx.calls_within(scope) if scope is not ctx.module else ():
            func = other.func
            if (
                other is not call
                and isinstance(func, (cst.Name, cst.Attribute))
                and ctx.qualname(func) is None
                and not (isinstance(func, cst.Name) and func.value in ctx.functions)
                and facts.is_ddp_model(func, other)
            ):
                return True
        return False

    @staticmethod
    def _under_no_grad(ctx: FileContext, call: cst.Call) -> bool:
        for ancestor in ctx.ancestors(call):
            if isinstance(ancestor, cst.With):
                for item in ancestor.items:
                    inner = item.item
                    if isinstance(inner, cst.Call) and ctx.call_name(inner) in _NO_GRAD:
                        return True
            if isinstance(ancestor, (cst.FunctionDef, cst.Lambda)):
                return False
        return False

    @staticmethod
    def _reaches_backward(ctx: FileContext, call: cst.Call) -> bool:
        """The call's value flows (through assignments in its function) into the
        receiver of a `.backward()` call."""
        scope = ctx.scope(call)
        statement = ctx.statement(call)
        tainted: set[str] = set()
        backwards = [
            b
            for b in ctx.method_calls("backward")
            if (ctx.scope(b) is scope and ctx.before(call, b)) or ctx.is_inside(call, b)
        ]
        if not backwards:
            return False
        for b in backwards:
            if ctx.is_inside(call, b.func):
                return True
        assigns: list[cst.CSTNode] = [
            n
            for n in ctx.walk(scope)
            if isinstance(n, (cst.Assign, cst.AugAssign, cst.AnnAssign))
            and ctx.scope(n) is scope
            and not ctx.before(n, statement)
        ]
        for node in assigns:
            if node is statement or names_in_value(ctx, node) & tainted:
                tainted |= _targets(node)
        if not tainted:
            return False
        return any(_names(ctx, b.func.value) & tainted for b in backwards)


def names_in_value(ctx: FileContext, node: cst.CSTNode) -> set[str]:
    value = getattr(node, "value", None)
    return _names(ctx, value) if value is not None else set()


def _targets(node: cst.CSTNode) -> set[str]:
    found: set[str] = set()
    if isinstance(node, cst.Assign):
        targets = [t.target for t in node.targets]
    elif isinstance(node, (cst.AugAssign, cst.AnnAssign)):
        targets = [node.target]
    else:
        return found
    stack = list(targets)
    while stack:
        target = stack.pop()
        if isinstance(target, (cst.Tuple, cst.List)):
            stack.extend(e.value for e in target.elements)
        elif isinstance(target, cst.StarredElement):
            stack.append(target.value)
        elif isinstance(target, cst.Name):
            found.add(target.value)
    return found

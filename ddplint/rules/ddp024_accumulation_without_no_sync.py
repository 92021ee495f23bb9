"""DDP024: gradient accumulation in a DDP loop without no_sync()."""

from __future__ import annotations

import re
from collections.abc import Iterator

import libcst as cst

from ddplint.analysis.ddp_models import may_be_ddp_model
from ddplint.context import FileContext
from ddplint.diagnostics import Severity
from ddplint.facts import last_name
from ddplint.names import dotted
from ddplint.rule import Finding, Rule, register

_OPTIMIZER_NAME = re.compile(r"optim|^opt(_|$)|^opt\d*$")
_SYNC_CONTROL = ("no_sync", "require_backward_grad_sync", "sync_gradients")
_SYNC_METHODS = frozenset({"no_sync", "accumulate", "join"})


def _conditions_between(ctx: FileContext, node: cst.CSTNode, top: cst.CSTNode) -> list[cst.If]:
    """The `if` statements (by branch) between `node` and the loop `top`."""
    found: list[cst.If] = []
    child = node
    for ancestor in ctx.ancestors(node):
        if ancestor is top:
            return found
        if isinstance(ancestor, cst.If) and child is not ancestor.test:
            found.append(ancestor)
        if isinstance(ancestor, (cst.FunctionDef, cst.Lambda, cst.IfExp)):
            return found
        child = ancestor
    return found


def _has_modulo(ctx: FileContext, expr: cst.CSTNode) -> bool:
    return any(
        isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Modulo)
        for n in ctx.walk(expr)
    )


def _is_optimizer_step(call: cst.Call) -> bool:
    func = call.func
    if not (isinstance(func, cst.Attribute) and func.attr.value == "step"):
        return False
    receiver = last_name(func.value) or ""
    if "scaler" in receiver.lower():
        return True
    return bool(_OPTIMIZER_NAME.search(receiver.lower())) and "sched" not in receiver.lower()


def _mentions_sync_control(ctx: FileContext, root: cst.CSTNode) -> bool:
    for node in ctx.walk(root):
        if isinstance(node, cst.Attribute) and node.attr.value in _SYNC_CONTROL:
            return True
        if isinstance(node, cst.Name) and any(s in node.value for s in _SYNC_CONTROL):
            return True
        if (
            isinstance(node, cst.Call)
            and isinstance(node.func, cst.Attribute)
            and node.func.attr.value in _SYNC_METHODS
            # `with model.join():` / `with accelerator.accumulate(model):`, not
            # `os.path.join(...)` or `", ".join(...)`
            and (node.func.attr.value == "no_sync" or isinstance(ctx.parent(node), cst.WithItem))
        ):
            return True
    return False


@register
class AccumulationWithoutNoSync(Rule):
    code = "DDP024"
    name = "accumulation-without-no-sync"
    severity = Severity.INFO
    summary = "Gradient accumulation under DDP without no_sync(): an all-reduce every micro-step"
    explanation = """\
## What it does
Flags the `.backward()` call of a training loop over a DDP model that runs `backward()`
on every iteration but `optimizer.step()` only every few (`if (i + 1) % accum == 0:`,
`if is_update_step:` computed that way, `if ni - last_step >= accumulate:`), or
that runs `backward()` in an inner loop over micro-batches before one `optimizer.step()`,
when nothing on that path uses `model.no_sync()` (nor toggles
`require_backward_grad_sync`, nor uses accelerate's `accumulate`).

## Why is this bad?
DDP all-reduces the gradients inside every `backward()`. While accumulating, only the
last micro-step's all-reduce is needed: the earlier ones send the whole gradient over the
network for nothing. The results are still correct (the sums are the same); the cost is
bandwidth and time, often a large share of the step on slow interconnects.

## Example
```python
for i, (x, y) in enumerate(loader):
    loss = criterion(model(x), y) / accum
    loss.backward()
    if (i + 1) % accum == 0:
        optimizer.step()
        optimizer.zero_grad()
```

## Use instead
```python
for i, (x, y) in enumerate(loader):
    sync = (i + 1) % accum == 0
    with (contextlib.nullcontext() if sync else model.no_sync()):
        loss = criterion(model(x), y) / accum
        loss.backward()
    if sync:
        optimizer.step()
        optimizer.zero_grad()
```

## Fix safety
No fix: the forward must move inside the `no_sync()` block too.

## References
- https://pytorch.org/docs/stable/generated/torch.nn.parallel.DistributedDataParallel.html#torch.nn.parallel.DistributedDataParallel.no_sync
"""
    flag = (
        """
import os
import torch
from torch.nn.parallel import DistributedDataParallel as DDP

def train(net, loader, optimizer, accum, local_rank, out_dir):
    model = DDP(net, device_ids=[local_rank])
    for step, batch in enumerate(loader):
        is_update_step = (step + 1) % accum == 0 or step + 1 == len(loader)
        loss = model(**batch).loss / accum
        loss.backward()
        if is_update_step:
            optimizer.step()
            optimizer.zero_grad()
    torch.save(model.module.state_dict(), os.path.join(out_dir, "model.pt"))
""",
        """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def train(net, loader, optimizer, accum, local_rank):
    model = DDP(net, device_ids=[local_rank])
    for i, (x, y) in enumerate(loader):
        loss = torch.nn.functional.cross_entropy(model(x), y) / accum
        loss.backward()
        if (i + 1) % accum == 0:
            optimizer.step()
            optimizer.zero_grad()
""",
        """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def train_one_epoch(model, loader, optimizer, scaler, args):
    for step, batch in enumerate(loader):
        with torch.autocast("cuda"):
            loss = model(batch).mean() / args.accum_steps
        scaler.scale(loss).backward()
        if step % args.accum_steps == args.accum_steps - 1:
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad(set_to_none=True)

def main(net, loader, optimizer, scaler, args):
    model = DDP(net, device_ids=[args.gpu])
    train_one_epoch(model, loader, optimizer, scaler, args)
""",
        """\
import torch.distributed as dist
import torch.nn as nn

def fit(net, loader, opt, grad_accum, rank):
    ddp_model = nn.parallel.DistributedDataParallel(net, device_ids=[rank])
    step = 0
    for inputs, targets in loader:
        step += 1
        out = ddp_model(inputs)
        (nn.functional.mse_loss(out, targets) / grad_accum).backward()
        if step % grad_accum == 0:
            opt.step()
            opt.zero_grad()
""",
    )
    allow = (
        """
import contextlib
import torch
from torch.nn.parallel import DistributedDataParallel as DDP

class Trainer:
    def __init__(self, net, loader, optimizer, accum, local_rank, distributed):
        self.distributed = distributed
        self.model = DDP(net, device_ids=[local_rank]) if distributed else net
        self.loader, self.optimizer, self.accum = loader, optimizer, accum

    def sync_context(self, step):
        if self.distributed and (step + 1) % self.accum != 0:
            return self.model.no_sync()
        return contextlib.nullcontext()

    def train_epoch(self):
        for step, (x, y) in enumerate(self.loader):
            with self.sync_context(step):
                loss = self.model(x, y) / self.accum
                loss.backward()
            if (step + 1) % self.accum == 0:
                self.optimizer.step()
                self.optimizer.zero_grad()
""",
        """\
import contextlib
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def train(net, loader, optimizer, accum, local_rank):
    model = DDP(net, device_ids=[local_rank])
    for i, (x, y) in enumerate(loader):
        sync = (i + 1) % accum == 0
        with contextlib.nullcontext() if sync else model.no_sync():
            loss = torch.nn.functional.cross_entropy(model(x), y) / accum
            loss.backward()
        if sync:
            optimizer.step()
            optimizer.zero_grad()
""",
        """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def train(net, loader, optimizer, accum, local_rank):
    model = DDP(net, device_ids=[local_rank])
    for i, (x, y) in enumerate(loader):
        model.require_backward_grad_sync = (i + 1) % accum == 0
        loss = torch.nn.functional.cross_entropy(model(x), y) / accum
        loss.backward()
        if (i + 1) % accum == 0:
            optimizer.step()
            optimizer.zero_grad()
""",
        """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def train(net, loader, optimizer, scheduler, local_rank):
    model = DDP(net, device_ids=[local_rank])
    for i, (x, y) in enumerate(loader):
        loss = torch.nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if (i + 1) % 100 == 0:
            scheduler.step()
""",
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        facts = ctx.facts
        if not facts.ddp_wraps:
            return
        checked_scopes: dict[cst.CSTNode, bool] = {}
        for backward in ctx.method_calls("backward"):
            if backward.args and any(a.keyword is None for a in backward.args):
                continue  # torch.autograd-style backward(tensor, grads): not a loss
            loop = self._enclosing_loop(ctx, backward)
            if loop is None or _conditions_between(ctx, backward, loop):
                continue
            steps = [c for c in ctx.calls_within(loop) if _is_optimizer_step(c)]
            if steps:
                if not all(self._counter_guarded(ctx, s, loop) for s in steps):
                    continue
            else:
                # micro-batches in an inner `for`, one optimizer step after it
                outer = self._enclosing_loop(ctx, loop)
                if not isinstance(loop, cst.For) or outer is None:
                    continue
                if _conditions_between(ctx, loop, outer):
                    continue
                if not any(
                    _is_optimizer_step(c) and not ctx.is_inside(c, loop)
                    for c in ctx.calls_within(outer)
                ):
                    continue
                loop = outer
            if not self._forwards_ddp(ctx, loop):
                continue
            if self._in_model_context(ctx, backward, loop):
                continue
            scope = ctx.scope(loop)
            if scope not in checked_scopes:
                checked_scopes[scope] = self._controls_sync(ctx, scope)
            if checked_scopes[scope]:
                continue
            yield Finding(
                backward,
                "gradient accumulation without `no_sync()`: DDP all-reduces gradients in "
                "every backward(), but the optimizer steps only once per several backward() "
                "calls; run the other micro-steps under `model.no_sync()` to skip the "
                "redundant all-reduces (results are the same)",
            )

    @staticmethod
    def _enclosing_loop(ctx: FileContext, node: cst.CSTNode) -> cst.For | cst.While | None:
        for ancestor in ctx.ancestors(node):
            if isinstance(ancestor, (cst.For, cst.While)):
                return ancestor
            if isinstance(ancestor, (cst.FunctionDef, cst.Lambda)):
                return None
        return None

    @staticmethod
    def _in_model_context(ctx: FileContext, node: cst.CSTNode, loop: cst.CSTNode) -> bool:
        """`backward()` inside `with helper(model, ...)` / `with model.something():` in the
        loop: a context manager that gets the DDP model may well enter no_sync()."""
        for ancestor in ctx.ancestors(node):
            if ancestor is loop:
                return False
            if not isinstance(ancestor, cst.With):
                continue
            for item in ancestor.items:
                call = item.item
                if not isinstance(call, cst.Call):
                    continue
                if (ctx.qualname(call.func) or "").startswith("torch."):
                    continue
                receiver = call.func.value if isinstance(call.func, cst.Attribute) else None
                exprs = [a.value for a in call.args]
                if receiver is not None:
                    exprs.append(receiver)
                if any(may_be_ddp_model(ctx, e, call) for e in exprs):
                    return True
        return False

    @staticmethod
    def _counter_guarded(ctx: FileContext, step: cst.Call, loop: cst.CSTNode) -> bool:
        """`if (i + 1) % accum == 0:`, `if ni - last_step >= accumulate:`, or
        `if is_update_step:` with `is_update_step = (i + 1) % accum == 0 or last` assigned
        in the loop."""
        for condition in _conditions_between(ctx, step, loop):
            if _has_modulo(ctx, condition.test):
                return True
            if isinstance(condition.test, cst.Comparison) and any(
                isinstance(n, cst.Name) and "accum" in n.value.lower()
                for n in ctx.walk(condition.test)
            ):
                return True  # `if ni - last_opt_step >= accumulate:` (YOLO)
            for node in ctx.walk(condition.test):
                if not isinstance(node, cst.Name):
                    continue
                for binding in ctx.bindings_of(node.value, condition):
                    if (
                        binding.kind == "assign"
                        and ctx.is_inside(binding.statement, loop)
                        and _has_modulo(ctx, binding.value)
                    ):
                        return True
        return False

    @staticmethod
    def _forwards_ddp(ctx: FileContext, loop: cst.CSTNode) -> bool:
        for call in ctx.calls_within(loop):
            func = call.func
            if isinstance(func, (cst.Name, cst.Attribute)) and ctx.qualname(func) is None:
                if isinstance(func, cst.Name) and func.value in ctx.functions:
                    continue
                if may_be_ddp_model(ctx, func, call):
                    return True
            # `loss = compute_loss(model, batch)`: a helper running the DDP forward
            if any(
                isinstance(a.value, (cst.Name, cst.Attribute))
                and may_be_ddp_model(ctx, a.value, call)
                for a in call.args
            ):
                return True
        return False

    @staticmethod
    def _controls_sync(ctx: FileContext, scope: cst.CSTNode) -> bool:
        """The function (or a same-file function or method it calls) uses no_sync or the
        like."""
        if _mentions_sync_control(ctx, scope):
            return True
        for call in ctx.calls_within(scope):
            name = dotted(call.func)
            if name is not None and name.startswith("self.") and name.count(".") == 1:
                name = name[len("self.") :]  # `with self.sync_context(step):`, a method here
            if name is None or "." in name:
                continue
            for func in ctx.functions.get(name, ()):
                if _mentions_sync_control(ctx, func):
                    return True
        return False

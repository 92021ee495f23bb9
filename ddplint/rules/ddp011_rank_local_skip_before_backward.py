"""DDP011: rank-local control flow between the forward and `backward()`."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from ddplint.analysis.oom import oom_path_swallowed
from ddplint.context import Binding, FileContext
from ddplint.diagnostics import Severity
from ddplint.names import dotted
from ddplint.rule import Finding, Rule, register

_SKIPS = (cst.Continue, cst.Break, cst.Return)
_AGREED_EXCEPTIONS = frozenset({"StopIteration", "KeyboardInterrupt", "SystemExit"})


def _loss_names(ctx: FileContext, backward: cst.Call) -> set[str]:
    """Names the tensor `backward()` is called on is built from (`loss` for
    `scaler.scale(loss / accum).backward()`)."""
    receiver = backward.func.value  # type: ignore[attr-defined]
    return {n for n in ctx.names_in(receiver) if "." not in n}


def _forward_names(
    ctx: FileContext, region: cst.CSTNode, backward: cst.Call
) -> tuple[set[str], cst.CSTNode | None]:
    """Names holding results of this step's forward: the loss and what it is computed from
    inside `region` (the loop body or function), and names derived from those; also the
    first statement computing one of them (where the forward starts)."""
    local = _region_bindings(ctx, region)
    data = _loop_data_names(ctx, region, local)
    wanted = _loss_names(ctx, backward)
    found: set[str] = set()
    start: cst.CSTNode | None = None
    while wanted:
        name = wanted.pop()
        if name in found or name in data:
            continue
        bindings = [
            b
            for b in local.get(name, [])
            if b.kind in ("assign", "augassign", "with") and ctx.before(b.statement, backward)
        ]
        if not bindings:
            continue
        found.add(name)
        for binding in bindings:
            if start is None or ctx.before(binding.statement, start):
                start = binding.statement
            wanted.update(n for n in ctx.names_in(binding.value) if "." not in n)
    # Values derived from the forward after it: `bad = torch.isnan(loss).any()`.
    changed = True
    while changed:
        changed = False
        for name, bindings in local.items():
            if name in found:
                continue
            for binding in bindings:
                if (
                    binding.kind in ("assign", "augassign")
                    and ctx.before(binding.statement, backward)
                    and found.intersection(ctx.names_in(binding.value))
                ):
                    found.add(name)
                    changed = True
                    break
    return found, start


_DATA_METHODS = frozenset(
    {
        "to",
        "cuda",
        "cpu",
        "float",
        "half",
        "bfloat16",
        "long",
        "int",
        "contiguous",
        "view",
        "reshape",
        "squeeze",
        "unsqueeze",
        "permute",
        "pin_memory",
        "items",
        "get",
        "keys",
        "values",
        "flatten",
        "transpose",
        "clone",
        "detach",
    }
)


def _region_bindings(ctx: FileContext, region: cst.CSTNode) -> dict[str, list[Binding]]:
    """Bindings of plain names whose statement lies inside `region`, by name."""
    start, end = ctx.order[region], ctx.subtree_end[region]
    frame = region if isinstance(region, cst.FunctionDef) else ctx.scope(region)
    local: dict[str, list[Binding]] = {}
    for name, bindings in ctx.model.bindings_in(frame).items():
        for binding in bindings:
            if start <= ctx.order[binding.statement] < end:
                local.setdefault(name, []).append(binding)
    return local


def _loop_data_names(
    ctx: FileContext, region: cst.CSTNode, local: dict[str, list[Binding]]
) -> set[str]:
    """The batch: the targets of the `for` loop of `region`, and names only moved or
    reshaped from it (`x = x.cuda(non_blocking=True)`, `images, labels = batch`)."""
    data: set[str] = set()
    if isinstance(region, cst.For):
        data = {n.value for n in ctx.walk(region.target) if isinstance(n, cst.Name)}
    changed = True
    while changed:
        changed = False
        for name, bindings in local.items():
            if name in data:
                continue
            if any(_moves_data(ctx, b.value, data, local) for b in bindings) and all(
                _moves_data(ctx, b.value, data | {name}, local) for b in bindings
            ):
                data.add(name)
                changed = True
    return data


def _moves_data(
    ctx: FileContext,
    value: cst.BaseExpression,
    data: set[str],
    local: dict[str, list[Binding]],
) -> bool:
    roots = {n.split(".")[0] for n in ctx.names_in(value)}
    if not roots & data:
        return False
    for node in ctx.walk(value):
        if isinstance(node, cst.Call):
            func = node.func
            if not (isinstance(func, cst.Attribute) and func.attr.value in _DATA_METHODS):
                return False
    return all(root in data or root not in local for root in roots)


def _agreed(ctx: FileContext, names: set[str], before: cst.CSTNode, region: cst.CSTNode) -> bool:
    """Each of `names` went through a collective (`dist.all_reduce(flag)`) before `before`:
    the decision is the same on every rank."""
    if not names:
        return False
    reduced: set[str] = set()
    collectives = ctx.domain.collectives
    for call in ctx.calls_within(region):
        if not ctx.before(call, before) or not collectives.issues(call):
            continue
        parent = ctx.parent(call)
        if collectives.is_collective(call) or isinstance(parent, cst.Expr):
            # `dist.all_reduce(flag)` (in place), or a helper whose result is dropped
            for arg in call.args:
                reduced.update(ctx.names_in(arg.value))
        elif isinstance(parent, cst.Assign):
            # `loss_dict_reduced = utils.reduce_dict(loss_dict)`: the result is reduced,
            # the argument (`loss_dict`) is still this rank's own
            for target in parent.targets:
                reduced.update(ctx.names_in(target.target))
    if names <= reduced:
        return True
    # `flag = reduced_tensor.item()`: a value computed from a reduced tensor.
    dependencies = ctx.domain.backward.dependencies
    for name in names - reduced:
        steps = [
            s
            for b in ctx.resolver.reaching(name, before)
            if b.kind == "assign"
            for s in dependencies(b.value, b.statement)
        ]
        if not any(
            isinstance(s.node, (cst.Name, cst.Attribute)) and dotted(s.node) in reduced
            for s in steps
        ):
            return False
    return True


def _handler_of(ctx: FileContext, node: cst.CSTNode, stop: cst.CSTNode) -> cst.ExceptHandler | None:
    for ancestor in ctx.ancestors(node):
        if ancestor is stop:
            return None
        if isinstance(ancestor, cst.ExceptHandler):
            return ancestor
    return None


def _handler_names(handler: cst.ExceptHandler) -> set[str]:
    kind = handler.type
    if kind is None:
        return set()
    kinds = [e.value for e in kind.elements] if isinstance(kind, cst.Tuple) else [kind]
    return {(dotted(k) or "").rpartition(".")[2] for k in kinds}


@register
class RankLocalSkipBeforeBackward(Rule):
    code = "DDP011"
    name = "rank-local-skip-before-backward"
    severity = Severity.ERROR
    summary = "Rank-local `continue`/`break`/`return` can skip `backward()` on some ranks"
    explanation = """
## What it does
Flags a `continue`, `break` or `return` between the forward pass and `backward()` taken on a
condition that can differ between ranks: a test on the loss or the outputs
(`if torch.isnan(loss): continue`, `if loss.item() > 1e3: break`), or an exception this rank
caught (`except RuntimeError: continue`).

Left alone: decisions made collectively (the flag is all-reduced first, then tested), and
skips that depend only on values every rank agrees on, such as epoch or step counters.
Handlers that swallow a CUDA out-of-memory error are DDP012's.

## Why is this bad?
DDP's gradient all-reduce runs inside `backward()`. A rank that skips it leaves the other
ranks waiting in that all-reduce: the job hangs until the NCCL watchdog or gloo timeout, or,
when the skipping rank reaches its next `backward()`, its buckets pair with the others'
previous step and the ranks' step counts drift apart.

## Example
```python
for x, y in loader:
    loss = criterion(model(x), y)
    if not torch.isfinite(loss):
        continue
    loss.backward()
    optimizer.step()
```

## Use instead
```python
for x, y in loader:
    loss = criterion(model(x), y)
    bad = (~torch.isfinite(loss)).float()
    dist.all_reduce(bad)  # every rank learns whether any rank saw a bad loss
    if bad.item() > 0:
        optimizer.zero_grad(set_to_none=True)
        continue
    loss.backward()
    optimizer.step()
```

## Fix safety
No automatic fix: the skip decision has to be shared through a collective.

## References
- https://pytorch.org/docs/stable/notes/ddp.html
- https://pytorch.org/docs/stable/distributed.html#torch.distributed.all_reduce
"""
    flag = (
        """
import math
import torch.distributed as dist

def reduce_dict(d):
    values = torch.stack([d[k] for k in sorted(d)])
    dist.all_reduce(values)
    return dict(zip(sorted(d), values / dist.get_world_size()))

def train_one_epoch(model, criterion, loader, optimizer):
    for samples, targets in loader:
        loss_dict = criterion(model(samples), targets)
        losses = sum(loss_dict.values())
        loss_dict_reduced = reduce_dict(loss_dict)
        reduced_total = sum(loss_dict_reduced.values())
        loss_value = reduced_total.item()
        if not math.isfinite(losses.item()):
            continue
        optimizer.zero_grad()
        losses.backward()
        optimizer.step()
""",
        """import torch
import torch.distributed as dist

def train(model, loader, optimizer, criterion):
    for x, y in loader:
        loss = criterion(model(x), y)
        if torch.isnan(loss):
            continue
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
""",
        """import torch
import torch.distributed as dist

def train_step(model, batch, optimizer, scaler):
    with torch.autocast("cuda", dtype=torch.float16):
        out = model(batch["x"])
        loss = out.float().mean()
    if loss.item() > 1e4:
        return None
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    return loss
""",
        """import torch
import torch.distributed as dist

def train(model, loader, optimizer):
    for batch in loader:
        try:
            loss = model(**batch).loss
        except ValueError:
            continue
        loss.backward()
        optimizer.step()
""",
    )
    allow = (
        """
import math
import torch.distributed as dist

def reduce_dict(d):
    values = torch.stack([d[k] for k in sorted(d)])
    dist.all_reduce(values)
    return dict(zip(sorted(d), values / dist.get_world_size()))

def train_one_epoch(model, criterion, loader, optimizer):
    for samples, targets in loader:
        loss_dict = criterion(model(samples), targets)
        losses = sum(loss_dict.values())
        loss_dict_reduced = reduce_dict(loss_dict)
        reduced_total = sum(loss_dict_reduced.values())
        loss_value = reduced_total.item()
        if not math.isfinite(loss_value):
            continue
        optimizer.zero_grad()
        losses.backward()
        optimizer.step()
""",
        """import torch
import torch.distributed as dist

def train(model, loader, optimizer, criterion):
    for x, y in loader:
        loss = criterion(model(x), y)
        bad = (~torch.isfinite(loss)).float()
        dist.all_reduce(bad)
        if bad.item() > 0:
            optimizer.zero_grad()
            continue
        loss.backward()
        optimizer.step()
""",
        """import torch
import torch.distributed as dist

def train(model, loader, optimizer, max_steps):
    step = 0
    for x, y in loader:
        if step >= max_steps:
            break
        loss = model(x).sum()
        loss.backward()
        optimizer.step()
        step += 1
""",
        """import torch
import torch.distributed as dist

def train(model, loader, optimizer):
    for x, y in loader:
        loss = model(x).sum()
        loss.backward()
        if not torch.isfinite(loss):
            optimizer.zero_grad()
            continue
        optimizer.step()
""",
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        for backward in ctx.method_calls("backward"):
            receiver = backward.func.value  # type: ignore[attr-defined]
            if ctx.qualname(receiver) is not None:  # torch.autograd.backward(...)
                continue
            loop = ctx.enclosing_loop(backward)
            scope = ctx.scope(backward)
            region = loop if loop is not None else scope
            if isinstance(region, cst.Module):
                continue
            yield from self._check_backward(ctx, backward, region, loop, scope)

    def _check_backward(
        self,
        ctx: FileContext,
        backward: cst.Call,
        region: cst.CSTNode,
        loop: cst.CSTNode | None,
        scope: cst.CSTNode,
    ) -> Iterator[Finding]:
        skips = []
        for node in ctx.walk(region):
            if not isinstance(node, _SKIPS) or ctx.scope(node) is not scope:
                continue
            if isinstance(node, (cst.Continue, cst.Break)) and (
                loop is None or ctx.enclosing_loop(node) is not loop
            ):
                continue
            skips.append(node)
        if not skips:
            return  # most training loops: nothing to analyse
        forward, start = _forward_names(ctx, region, backward)
        if start is None:
            return
        for node in skips:
            handler = _handler_of(ctx, node, region)
            if handler is not None:
                if self._skips_in_handler(ctx, handler, backward, start):
                    yield Finding(
                        node,
                        f"`{ctx.code(node).strip()}` in an exception handler skips "
                        "`backward()` on the rank that raised: the other ranks wait in DDP's "
                        "gradient all-reduce (a hang, or step counts that drift apart); "
                        "re-raise, or agree on the skip with a collective",
                    )
                continue
            if not (ctx.before(start, node) and ctx.before(node, backward)):
                continue
            test = self._rank_local_test(ctx, node, forward, region)
            if test is not None:
                yield Finding(
                    node,
                    f"`{ctx.code(node).strip()}` on `{ctx.code(test).strip()}` (a value only "
                    "this rank computed) can skip `backward()` on some ranks only: the others "
                    "wait in DDP's gradient all-reduce (a hang, or step counts that drift apart); "
                    "all-reduce the decision first",
                )

    @staticmethod
    def _skips_in_handler(
        ctx: FileContext, handler: cst.ExceptHandler, backward: cst.Call, start: cst.CSTNode
    ) -> bool:
        if _handler_names(handler) & _AGREED_EXCEPTIONS:
            return False
        if oom_path_swallowed(ctx, handler) is not None:
            return False  # an OOM handler: DDP012 reports it
        try_node = ctx.parent(handler)
        if not isinstance(try_node, cst.Try):
            return False
        body = try_node.body
        return ctx.is_inside(backward, body) or ctx.is_inside(start, body)

    @staticmethod
    def _rank_local_test(
        ctx: FileContext, node: cst.CSTNode, forward: set[str], region: cst.CSTNode
    ) -> cst.BaseExpression | None:
        for ancestor in ctx.ancestors(node):
            if ancestor is region:
                return None
            if isinstance(ancestor, (cst.If, cst.While)):
                if any(
                    isinstance(n, cst.Call) and ctx.domain.collectives.issues(n)
                    for n in ctx.walk(ancestor.test)
                ):
                    continue  # `if any_rank_bad(loss):` decides through a collective
                names = {n.split(".")[0] for n in ctx.names_in(ancestor.test)}
                local = names & forward
                if local and not _agreed(ctx, local, ancestor, region):
                    return ancestor.test
        return None

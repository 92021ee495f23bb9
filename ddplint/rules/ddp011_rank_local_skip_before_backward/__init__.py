"""DDP011: rank-local control flow between the forward and `backward()`."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from ddplint.context import FileContext
from ddplint.diagnostics import Severity
from ddplint.domain import domain_of
from ddplint.domain.ddp_steps import steps_ddp_model, steps_only_its_module
from ddplint.domain.oom import oom_path_swallowed
from ddplint.domain.rank_local_tests import (
    batch_content_test,
    catches_rank_local_error,
    enclosing_handler,
    rank_local_test,
    reads_only_shapes,
    under_test,
)
from ddplint.domain.runners import one_process
from ddplint.domain.step_values import (
    batch_names,
    moves_batch,
    step_values,
)
from ddplint.names import dotted
from ddplint.rule import Finding, Rule, register

_SKIPS = (cst.Continue, cst.Break, cst.Return)
# Tests that weigh a computed value: non-finite checks and orderings.
_VALUE_TESTS = frozenset({"isfinite", "isnan", "isinf", "isneginf", "isposinf"})
_ORDERINGS = (cst.LessThan, cst.LessThanEqual, cst.GreaterThan, cst.GreaterThanEqual)


@register
class RankLocalSkipBeforeBackward(Rule):
    code = "DDP011"
    name = "rank-local-skip-before-backward"
    severity = Severity.ERROR
    # default: first contact, fresh103 to fresh177 (bench/realworld/first_contact.py): 46 / 16 / 7
    default = True
    summary = "Rank-local `continue`/`break`/`return` can skip `backward()` on some ranks"
    explanation = """
## What it does
Flags a `continue`, `break` or `return` before `backward()` taken on a condition that can
differ between ranks: a test on the loss or the outputs (`if torch.isnan(loss): continue`,
`if loss.item() > 1e3: break`), an exception this rank caught (`except RuntimeError:
continue`), or, in a loop over a loader that moves its batch to a device, a test on what
this rank's batch holds (`if any(len(t) < 1 for t in targets): continue`, `if batch is
None: continue`): each rank reads its own shard. A field of the batch tested as it is
(`if batch["size"] == 0:`) is unproven: what it holds is the collate function's choice.

A `break` or `return` after the backward, leaving the training loop on such a test (`if
math.isnan(running_loss): break`, where `running_loss += loss.item()`), skips the next
step's `backward()` just the same; a `continue` there skips nothing and is left alone.

Also flags `backward()` itself under such a test (`if torch.isfinite(loss):
loss.backward()`, or the backward in the `else` of `if not torch.isfinite(loss):`) when the
test's other branch runs no backward of its own and issues no collective: the rank on the
other side of the test skips the backward just the same. An `else:
(loss * 0).backward()` keeps the rank in the all-reduce and is left alone. Proven where the
test weighs a value (`torch.isfinite(loss)`, `loss.item() < limit`); a test of whether
something exists (`if losses:`, `if part is not None:`) is unproven: whether the data can
make it fail on one rank only is out of sight.

Left alone: decisions made collectively (the flag is all-reduced first, then tested),
skips that depend only on values every rank agrees on, such as epoch or step counters,
skips on the batch's shape (`len(images)`, `x.size(0) < 2`, `x.numel() == 0`: a
`DistributedSampler` gives every rank the same sample count, and the transforms fix the
sizes), skips on what the step is handed rather than computes: its parameters, and what it only
reads off an object it does not feed (`acts = state.pop_activations()` in a pipeline
engine, filled by a forward elsewhere on the schedule's terms; a no-argument method that
runs a forward itself, `loss = trainer.step()`, reads the same and is missed), and
skips in a branch that needs a parameter value no call passes (`else: return` under
`if raise_on_error:` in a private method whose every call, in this file and none other,
keeps `raise_on_error=True`), and skips in code that runs as one process (a script that
starts, joins and wraps nothing: `ddplint.domain.runners.one_process`). Handlers that
swallow a CUDA out-of-memory error are DDP012's.

Proven, and reported by default, when the step runs a DDP-wrapped model in sight (called
before the backward, or handed to a call there), or when the pass the rank skips issues a
collective whenever it runs (`reduce_loss_dict(loss_dict)` ending in `dist.all_reduce`).
When the model comes from out of sight, or is a temporary one built without DDP (a
batch-size probe), and nothing skipped issues a collective, the finding is unproven (shown
under `--preview`): without DDP's all-reduce in that backward there is nothing to skip.

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
            if type(region) is cst.Module or _in_autograd_function(ctx, backward):
                continue
            for finding in self._check_backward(ctx, backward, region, loop, scope):
                if not one_process(ctx, finding.node):  # no other rank to wait
                    yield finding

    def _check_backward(
        self,
        ctx: FileContext,
        backward: cst.Call,
        region: cst.CSTNode,
        loop: cst.CSTNode | None,
        scope: cst.CSTNode,
    ) -> Iterator[Finding]:
        guarded = _guarded_backward(ctx, backward, region)
        if guarded is not None:
            yield guarded
        skips = [
            node
            for node in ctx.nodes_within(region, *_SKIPS)
            if ctx.scope(node) is scope
            and (
                type(node) is cst.Return or (loop is not None and ctx.enclosing_loop(node) is loop)
            )
        ]
        if not skips:
            return  # most training loops: nothing to analyse
        forward = step_values(ctx, region, backward)
        start = forward.start
        if start is None:
            return
        ddp_step = steps_ddp_model(ctx, region, backward)
        unwrapped_only = not ddp_step and steps_only_its_module(ctx, region, backward)
        batch = _loader_batch(ctx, loop)
        for node in skips:
            handler = enclosing_handler(ctx, node, region)
            if handler is not None:
                if self._skips_in_handler(ctx, handler, backward, start):
                    skipped = skipped_collective(ctx, node, region) or _collective_in_try(
                        ctx, handler
                    )
                    unproven = not ddp_step and skipped is None
                    if unwrapped_only and unproven:
                        continue  # the step runs only `model.module`: nothing to wait in
                    waits = _waited_in(ctx, skipped if unwrapped_only else None)
                    yield Finding(
                        node,
                        f"`{ctx.code(node).strip()}` in an exception handler skips "
                        f"`backward()` on the rank that raised: the other ranks wait in {waits} "
                        "(a hang, or step counts that drift apart); re-raise, or agree on the "
                        "skip with a collective",
                        unproven=unproven,
                    )
                continue
            after = not ctx.before(node, backward)
            if after and (loop is None or type(node) is cst.Continue):
                continue  # the step's backward already ran, and no later one is skipped
            test, what, opaque = None, "a value only this rank computed", False
            if ctx.before(start, node):
                local = forward.later if after else forward.names
                test = rank_local_test(ctx, node, local, region)
                opaque = test is not None and reads_only_shapes(ctx, test, local)
            if test is None and batch:
                read = batch_content_test(ctx, node, batch, region)
                if read is not None:
                    test, opaque = read.test, read.opaque
                what = "what this rank's own batch holds"
            if test is None:
                continue
            collective = None if ddp_step else skipped_collective(ctx, node, region)
            if unwrapped_only and collective is None:
                continue  # the step runs only `model.module`: its backward syncs nothing
            waits = _waited_in(ctx, collective)
            outcome = (
                "leave the training loop on some ranks only, after this step's `backward()`: "
                "the others run the next step and wait"
                if after
                else "skip `backward()` on some ranks only: the others wait"
            )
            yield Finding(
                node,
                f"`{ctx.code(node).strip()}` on `{ctx.code(test).strip()}` ({what}) can "
                f"{outcome} in {waits} (a hang, or step counts that drift apart); all-reduce "
                "the decision first",
                unproven=opaque or (not ddp_step and collective is None),
            )

    @staticmethod
    def _skips_in_handler(
        ctx: FileContext, handler: cst.ExceptHandler, backward: cst.Call, start: cst.CSTNode
    ) -> bool:
        """The handler catches what this rank alone raised in the step (not an OOM: that
        is DDP012's) around the forward or the backward."""
        if not catches_rank_local_error(handler) or oom_path_swallowed(ctx, handler) is not None:
            return False
        try_node = ctx.parent(handler)
        if type(try_node) is not cst.Try:
            return False
        return ctx.is_inside(backward, try_node.body) or ctx.is_inside(start, try_node.body)


def _guarded_backward(ctx: FileContext, backward: cst.Call, region: cst.CSTNode) -> Finding | None:
    """`backward()` under a test of what this rank computed in the step (`if
    torch.isfinite(loss): loss.backward()`) whose other branch neither runs a backward
    nor issues a collective: a rank failing the test skips DDP's all-reduce. Proven when
    the step runs a DDP-wrapped model in sight."""
    if not under_test(ctx, backward, region):
        return None  # most steps: nothing to analyse
    forward = step_values(ctx, region, backward)
    if forward.start is None:
        return None
    test = rank_local_test(ctx, backward, forward.names, region)
    if test is None:
        return None
    branch = ctx.parent(test)
    in_else = type(branch) is cst.If and not ctx.is_inside(backward, branch.body)
    if type(branch) is cst.If and _answers(ctx, _other_branch(ctx, branch, backward)):
        return None  # `else: (loss * 0).backward()`: every rank joins the all-reduce
    holds, fails = ("fails", "holds") if in_else else ("holds", "fails")
    return Finding(
        backward,
        f"`{ctx.code(backward).strip()}` runs only where `{ctx.code(test).strip()}` {holds} "
        f"(a value only this rank computed): a rank where it {fails} skips the backward, and "
        "the others wait in DDP's gradient all-reduce (a hang, or step counts that drift "
        "apart); all-reduce the decision first",
        unproven=not steps_ddp_model(ctx, region, backward)
        or not _tests_values(ctx, test)
        or reads_only_shapes(ctx, test, forward.names),
    )


def _tests_values(ctx: FileContext, test: cst.BaseExpression) -> bool:
    """The test weighs what the step computed (`torch.isfinite(loss)`, `loss.item() <
    limit`), rather than whether something exists (`if losses:`, `if part is not None:`):
    whether the data can make that fail on one rank only is out of sight."""
    for node in ctx.walk(test):
        if type(node) is cst.Call and (dotted(node.func) or "").rpartition(".")[2] in _VALUE_TESTS:
            return True
        if type(node) is cst.Comparison and any(
            isinstance(c.operator, _ORDERINGS) for c in node.comparisons
        ):
            return True
    return False


def _other_branch(ctx: FileContext, branch: cst.If, backward: cst.Call) -> cst.CSTNode | None:
    """The branch of `branch` that `backward` is not in: its `else` (or `elif`) when the
    backward is in its body, else its body (`if not ok: skip()` / `else: loss.backward()`)."""
    return branch.orelse if ctx.is_inside(backward, branch.body) else branch.body


def _answers(ctx: FileContext, other: cst.CSTNode | None) -> bool:
    """The other branch runs a backward or issues a collective of its own."""
    if other is None:
        return False
    issues = domain_of(ctx).collectives.issues
    return any(
        type(node) is cst.Call
        and (
            issues(node)
            or (type(node.func) is cst.Attribute and node.func.attr.value == "backward")
        )
        for node in ctx.walk(other)
    )


def _loader_batch(ctx: FileContext, loop: cst.CSTNode | None) -> frozenset[str]:
    """The batch names of a `for` loop that moves its batch to a device (it iterates a
    loader), else none."""
    if type(loop) is not cst.For:
        return frozenset()
    batch = batch_names(ctx, loop)
    return batch if moves_batch(ctx, loop, batch) else frozenset()


def skipped_collective(ctx: FileContext, skip: cst.CSTNode, region: cst.CSTNode) -> cst.Call | None:
    """A call after `skip` in its pass of `region` that issues a collective whenever it
    runs (`dist.all_reduce(...)`, `reduce_loss_dict(...)`), under no rank gate: the ranks
    that do not skip issue it, the skipping rank does not."""
    body = region.body if isinstance(region, (cst.For, cst.While, cst.FunctionDef)) else region
    return next(
        (c for c in ctx.calls_within(body) if ctx.before(skip, c) and _every_rank_issues(ctx, c)),
        None,
    )


def _collective_in_try(ctx: FileContext, handler: cst.ExceptHandler) -> cst.Call | None:
    """A call in the body of the `try` that `handler` ends that issues a collective
    whenever it runs, under no rank gate: a rank that raises before it skips it."""
    try_node = ctx.parent(handler)
    if type(try_node) is not cst.Try:
        return None
    return next((c for c in ctx.calls_within(try_node.body) if _every_rank_issues(ctx, c)), None)


def _every_rank_issues(ctx: FileContext, call: cst.Call) -> bool:
    """`call` issues a collective of the whole group whenever it runs, under no rank gate:
    each rank that reaches it issues it."""
    domain = domain_of(ctx)
    return (
        domain.collectives.surely_issues(call)
        and not domain.collectives.on_subgroup(call)
        and domain.gates.gate(call) is None
    )


def _waited_in(ctx: FileContext, collective: cst.Call | None) -> str:
    """What the ranks that do not skip wait in: the collective the skip passes, else DDP's
    gradient all-reduce inside `backward()`."""
    if collective is None:
        return "DDP's gradient all-reduce"
    return f"`{ctx.code(collective.func).strip()}()`, which issues a collective"


def _in_autograd_function(ctx: FileContext, node: cst.CSTNode) -> bool:
    """`node` is in a method of a custom `torch.autograd.Function`: a `backward()` there
    differentiates a local graph of the op (a derivative computed in its forward, a
    penalty's gradient in its backward), not the training step's loss, and a `return`
    there ends the op, not the step."""
    func = ctx.enclosing_function(node)
    cls = None if func is None else ctx.model.enclosing_class(func)
    return cls is not None and any(
        ctx.qualname(base.value) == "torch.autograd.Function" for base in cls.bases
    )

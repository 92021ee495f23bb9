"""DDP048: values agreed across ranks by a helper whose result is dropped, then tested by
each rank on its own to leave the loop."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from ddplint.context import FileContext
from ddplint.diagnostics import Severity
from ddplint.rule import Finding, Rule, register
from ddplint.rules.ddp048_agreement_discarded.agreements import dropped_agreements


@register
class AgreementDiscarded(Rule):
    code = "DDP048"
    name = "agreement-discarded"
    severity = Severity.ERROR
    summary = "Flags agreed across ranks by a helper whose result is dropped, then tested per rank"
    explanation = """
## What it does
Flags the call, made as a statement, of a function of this file that combines values
across ranks (it issues a collective on every call and returns the combined result) when
the names handed to it are then tested, as they were, to leave the loop holding the call
(`communicate_flags(training_allowed)` ... `if not training_allowed: break`). The function
must not reduce the argument itself in place (`dist.all_reduce(flag)` on the parameter):
it builds a new tensor from it, so the argument keeps this rank's own value.

Left alone: the result assigned (`training_allowed = communicate_flags(training_allowed)`),
helpers that reduce their argument in place, calls under a condition other than a test of
whether the job is distributed, and tests after the name was bound again.

## Why is this bad?
The helper exists because each rank decides on its own: a wall-clock deadline read from
its own clock, its own loss. Dropping the agreed result leaves every rank acting on its own
value: one rank leaves the loop while the others start the next pass and wait in the
helper's collective (or DDP's gradient all-reduce) for it, a hang until the collective
timeout.

## Example
```python
for step, batch in enumerate(loader):
    loss = train_step(model, batch)
    stop = time.time() > deadline
    agree(stop)           # returns the all-reduced flag; dropped
    if stop:
        break
```

## Use instead
```python
    stop = agree(stop)    # every rank acts on the same value
    if stop:
        break
```

## Fix safety
No automatic fix: the names to assign depend on what the helper returns.

## References
- https://pytorch.org/docs/stable/distributed.html#torch.distributed.all_reduce
"""
    flag = (
        """
import time
import torch
import torch.distributed as dist

def communicate_flags(allowed):
    flag = torch.tensor([float(allowed)], device="cuda")
    dist.all_reduce(flag, op=dist.ReduceOp.MIN)
    return bool(flag.item())

def train(model, loader, optimizer, deadline):
    allowed = True
    for batch in loader:
        loss = model(batch).mean()
        loss.backward()
        optimizer.step()
        if time.time() > deadline:
            allowed = False
        communicate_flags(allowed)
        if not allowed:
            break
""",
        """
import torch
import torch.distributed as dist

def any_rank(flag):
    t = torch.tensor(int(flag), device="cuda")
    dist.all_reduce(t)
    return t.item() > 0

def fit(model, loader, optimizer, limit):
    while True:
        for x, y in loader:
            loss = (model(x) - y).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        diverged = loss.item() > limit
        any_rank(diverged)
        if diverged:
            return model
""",
        """
import torch
import torch.distributed as dist

def agree(stop, world_size):
    if world_size == 1:
        return stop
    votes = torch.tensor([1.0 if stop else 0.0], device="cuda")
    dist.all_reduce(votes)
    return votes.item() > 0

def run(model, loader, optimizer, world_size, patience):
    bad = 0
    for epoch in range(100):
        for x in loader:
            optimizer.zero_grad()
            model(x).sum().backward()
            optimizer.step()
        bad = bad + 1 if model.last_loss > 1.0 else 0
        stop = bad >= patience
        agree(stop, world_size)
        if stop:
            break
""",
    )
    allow = (
        """
import time
import torch
import torch.distributed as dist

def communicate_flags(allowed):
    flag = torch.tensor([float(allowed)], device="cuda")
    dist.all_reduce(flag, op=dist.ReduceOp.MIN)
    return bool(flag.item())

def train(model, loader, optimizer, deadline):
    allowed = True
    for batch in loader:
        loss = model(batch).mean()
        loss.backward()
        optimizer.step()
        allowed = communicate_flags(time.time() <= deadline)
        if not allowed:
            break
""",
        """
import torch
import torch.distributed as dist

def sync_flag(flag):
    dist.all_reduce(flag, op=dist.ReduceOp.MAX)
    return flag

def fit(model, loader, optimizer):
    for x, y in loader:
        loss = (model(x) - y).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        bad = (~torch.isfinite(loss)).float()
        sync_flag(bad)
        if bad.item() > 0:
            break
""",
        """
import torch
import torch.distributed as dist

def log_mean(value):
    t = torch.tensor([value], device="cuda")
    dist.all_reduce(t)
    return t.item() / dist.get_world_size()

def fit(model, loader, optimizer, max_steps):
    for step, (x, y) in enumerate(loader):
        loss = (model(x) - y).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        log_mean(step)
        if step >= max_steps:
            break
""",
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        for found in dropped_agreements(ctx):
            names = ", ".join(f"`{n}`" for n in sorted(found.names))
            leaves = "`break`" if type(found.exit) is cst.Break else "`return`"
            keep = "keeps" if len(found.names) == 1 else "keep"
            yield Finding(
                found.call,
                f"the result of `{ctx.code(found.call.func).strip()}(...)`, which agrees "
                f"{names} across ranks, is dropped: {names} {keep} this rank's own value, and "
                f"{leaves} on `{ctx.code(found.test).strip()}` can leave the loop on "
                "some ranks only while the others reach this call in the next pass and wait "
                "in its collective (a hang until the timeout); assign the result",
            )

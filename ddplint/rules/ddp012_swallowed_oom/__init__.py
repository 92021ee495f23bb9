"""DDP012: an out-of-memory error caught and swallowed instead of re-raised."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from ddplint.context import FileContext
from ddplint.diagnostics import Severity
from ddplint.domain import domain_of
from ddplint.domain.combined_values import combined_values
from ddplint.domain.ddp_facts import facts_of
from ddplint.domain.ddp_steps import ddp_backward, trains_ddp_model
from ddplint.domain.loops import named_for
from ddplint.domain.oom import oom_path_swallowed
from ddplint.domain.project_view import project_of
from ddplint.domain.runners import call_sites, one_process
from ddplint.names import dotted
from ddplint.rule import Finding, Rule, register


@register
class SwallowedOOM(Rule):
    code = "DDP012"
    name = "swallowed-oom"
    severity = Severity.ERROR
    # opt-in: first contact, fresh103 to fresh141 (bench/realworld/first_contact.py): 3 / 9 / 1
    default = False
    summary = "Out-of-memory error caught and swallowed: the rank carries on alone"
    explanation = """
## What it does
Flags an `except torch.cuda.OutOfMemoryError` (or `torch.OutOfMemoryError`, or a
`RuntimeError`/`Exception` handler that singles out an OOM by its message, `"out of memory"
in str(e)`) whose OOM path carries on (skips the batch, halves the batch size, returns)
instead of re-raising or exiting. A path that carries on only where the job is not
distributed (after `if dist.is_initialized(): raise`) swallows nothing under DDP and is
left alone, as is a handler wherever the job runs as one process (a script that starts,
joins and asks about no process group, a worker spawned alone: `runners.one_process`).
Unproven (`--preview`) where the step around it runs its model through the module inside
the wrapper (`model.module.encode(x)`) and issues no collective in sight, and where the
`try` runs no `backward()`, no call named for a training step (`trainer.train_step(...)`)
and issues no collective in sight (in it, in a function of this file or a project helper
it calls: an inference benchmark's forward, a probe of the batch size): the other ranks
may have nothing to wait in.

## Why is this bad?
Under DDP the rank that hit the OOM skips the rest of the step, including the gradient
all-reduce inside `backward()` and any collective that follows, while the other ranks are
already waiting in it. The PyTorch maintainers' advice is that skipping communication after
an OOM desynchronises the collectives: the job hangs until the NCCL watchdog or gloo timeout,
or the ranks' collectives pair up wrongly and step counts drift. If the error propagates,
the process exits and torchrun stops the other workers at once.

## Example
```python
for x, y in loader:
    try:
        loss = criterion(model(x), y)
        loss.backward()
    except torch.cuda.OutOfMemoryError:
        torch.cuda.empty_cache()
        continue
```

## Use instead
```python
for x, y in loader:
    try:
        loss = criterion(model(x), y)
        loss.backward()
    except torch.cuda.OutOfMemoryError:
        print(f"rank {rank}: CUDA OOM at step {step}", flush=True)
        raise
```

## Fix safety
No automatic fix: whether to re-raise or to exit is the author's choice.

## References
- https://pytorch.org/docs/stable/generated/torch.cuda.OutOfMemoryError.html
- https://pytorch.org/docs/stable/elastic/run.html
"""
    flag = (
        """import torch
import torch.distributed as dist

def train(model, loader, optimizer, criterion):
    for x, y in loader:
        try:
            loss = criterion(model(x), y)
            loss.backward()
        except torch.cuda.OutOfMemoryError:
            torch.cuda.empty_cache()
            continue
        optimizer.step()
""",
        """import torch
import torch.distributed as dist

def step(model, batch, optimizer):
    try:
        model(batch).sum().backward()
    except RuntimeError as e:
        if "out of memory" in str(e):
            print("OOM, skipping batch")
            optimizer.zero_grad(set_to_none=True)
            return None
        raise
    optimizer.step()
""",
        """import torch
from torch.distributed import init_process_group

def step(model, batch):
    try:
        return model(batch).mean()
    except (torch.OutOfMemoryError, ValueError):
        torch.cuda.empty_cache()
        return None
""",
    )
    allow = (
        """import torch
import torch.distributed as dist

def step(model, batch, rank):
    try:
        model(batch).sum().backward()
    except torch.cuda.OutOfMemoryError:
        print(f"rank {rank} ran out of memory", flush=True)
        raise
""",
        """import sys
import torch
import torch.distributed as dist

def step(model, batch):
    try:
        model(batch).sum().backward()
    except RuntimeError as err:
        if "out of memory" not in str(err):
            raise
        print(torch.cuda.memory_summary())
        sys.exit(1)
""",
        """import torch
import torch.distributed as dist

def step(model, batch):
    try:
        model(batch).sum().backward()
    except RuntimeError as err:
        if "stride" in str(err):
            return None
        raise
""",
        """
import torch

def main(model, loader, optimizer, batch_size):
    for x, y in loader:
        try:
            loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
            loss.backward()
        except RuntimeError as e:
            if "out of memory" not in str(e):
                raise
            torch.cuda.empty_cache()
            continue
        optimizer.step()

if __name__ == "__main__":
    main(*build())
""",
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        for node in ctx.nodes_of(cst.ExceptHandler):
            if type(node) is not cst.ExceptHandler or not oom_path_swallowed(ctx, node):
                continue
            if one_process(ctx, node):
                continue  # no other rank to wait for this one
            if _redoes_the_work(ctx, node):
                continue  # every path goes on the same way: nothing is skipped
            if _outcome_agreed(ctx, node):
                continue  # the ranks agree on the failure before they part ways
            yield Finding(
                node,
                "CUDA out-of-memory error caught and not re-raised: a rank that runs out "
                "of memory here carries on down another path, while any rank that did not "
                "goes on to its next collective (the gradient all-reduce, say) and waits "
                "there (a hang, or desynchronised collectives); re-raise or exit so "
                "torchrun stops the job",
                unproven=_bypasses_ddp(ctx, node) or not _step_in_sight(ctx, node),
            )


def _redoes_the_work(ctx: FileContext, handler: cst.ExceptHandler) -> bool:
    """The handler does again what its `try` did, another way, and goes on where the `try`
    would have: it binds every name the `try` binds (`det = self.detector(img, device=
    "cpu")` for `det = self.detector(img, device=self.device)`) and leaves by no `return`,
    `break` or `continue`; and the `try` issues nothing collective in sight (no collective,
    no DDP model's forward or backward, no training function handed one). A rank that ran
    out of memory then does what the others do, later."""
    try_node = ctx.model.parents.get(handler)
    if type(try_node) is not cst.Try:
        return False
    done = _bound(ctx, try_node.body)
    if not done or not done <= _bound(ctx, handler.body):
        return False
    if any(isinstance(n, (cst.Return, cst.Break, cst.Continue)) for n in ctx.walk(handler.body)):
        return False
    facts = facts_of(ctx)
    return not any(
        facts.is_ddp_model(call.func, call) for call in ctx.calls_within(try_node.body)
    ) and not _issues_collective(ctx, try_node)


def _outcome_agreed(ctx: FileContext, handler: cst.ExceptHandler) -> bool:
    """The handler leaves its function by `return` (`return False` for "did not fit"), and
    every call of that function in sight hands its result to a collective in the caller
    (`ok = torch.tensor(int(fits(...)))`, `dist.all_reduce(ok, op=ReduceOp.MIN)`): every
    rank, the one that ran out of memory included, meets that collective, and all decide
    on the combined answer (a distributed search for the largest batch that fits). The
    `try` must issue no collective of its own (no backward through a DDP model): a rank
    failing between two of them leaves the others waiting in the second."""
    try_node = ctx.model.parents.get(handler)
    if type(try_node) is not cst.Try or not any(
        type(n) is cst.Return for n in ctx.walk(handler.body)
    ):
        return False
    func = ctx.enclosing_function(handler)
    if func is None or _issues_collective(ctx, try_node):
        return False  # a rank failing between the others' collectives: they wait there
    collectives = domain_of(ctx).collectives
    sites = call_sites(ctx, func)
    for site in sites:
        statement = ctx.statement(site)
        if type(statement) is not cst.Assign or len(statement.targets) != 1:
            return False
        name = dotted(statement.targets[0].target)
        combined = combined_values(ctx, ctx.scope(site), lambda _, c: collectives.is_collective(c))
        if name is None or combined is None or name not in combined.fed:
            return False
    return bool(sites)


def _issues_collective(ctx: FileContext, try_node: cst.Try) -> bool:
    """The `try` issues a collective in sight: an explicit one, a backward through a DDP
    model, or a training function handed one."""
    collectives = domain_of(ctx).collectives
    return any(
        ddp_backward(ctx, call) or trains_ddp_model(ctx, call) or collectives.issues(call)
        for call in ctx.calls_within(try_node.body)
    )


def _bound(ctx: FileContext, block: cst.CSTNode) -> set[str]:
    """The names and attributes a block assigns (`det`, `self.device`)."""
    found: set[str] = set()
    for node in ctx.walk(block):
        if type(node) is cst.Assign:
            found.update(ctx.code(t.target) for t in node.targets)
        elif isinstance(node, (cst.AnnAssign, cst.AugAssign)):
            found.add(ctx.code(node.target))
    return found


def _step_in_sight(ctx: FileContext, handler: cst.ExceptHandler) -> bool:
    """The `try` of `handler` runs a training step or a collective in sight: a DDP model's
    forward, a step by its name (`_names_a_step`), a `backward()` (in it, in a function of
    this file it calls, or in a project helper it calls), or a collective
    (`_issues_collective`). An OOM caught around anything else
    (an inference benchmark's forward, a probe of the batch size) may skip no collective
    the other ranks wait in."""
    try_node = ctx.model.parents.get(handler)
    if type(try_node) is not cst.Try:
        return True
    loops = domain_of(ctx).loops
    facts = facts_of(ctx)
    project = project_of(ctx)
    return _issues_collective(ctx, try_node) or any(
        facts.is_ddp_model(call.func, call)
        or _names_a_step(call)
        or loops.reaches_backward(call)
        or (project is not None and project.helper_runs_backward(ctx, call))
        for call in ctx.calls_within(try_node.body)
    )


def _names_a_step(call: cst.Call) -> bool:
    """A call whose name says it runs a training step (`trainer.train_step(batch)`,
    `task.train_step(...)`), or a DDP model's `no_sync()` entered for one: the step of a
    trainer object of another module, whose backward is out of sight."""
    name = (dotted(call.func) or "").rpartition(".")[2]
    return name == "no_sync" or named_for([name]) == "training"


def _bypasses_ddp(ctx: FileContext, handler: cst.ExceptHandler) -> bool:
    """The loop (else the function) around the handler's `try` runs its model through the
    module inside a DDP wrapper (`model.module.encode(x)`) and issues no collective in sight
    (no backward through a DDP model, no training function handed one, no explicit
    collective): the other ranks may have nothing to wait in. A model out of sight is taken
    for the DDP one, as the rule always has."""
    region = ctx.enclosing_loop(handler) or ctx.enclosing_function(handler) or ctx.module
    calls = ctx.calls_within(region)
    if not any(_through_module(call.func) for call in calls):
        return False
    collectives = domain_of(ctx).collectives
    return not any(
        ddp_backward(ctx, call) or trains_ddp_model(ctx, call) or collectives.surely_issues(call)
        for call in calls
    )


def _through_module(func: cst.BaseExpression) -> bool:
    """`x.module(...)` or `x.module.method(...)`."""
    if type(func) is cst.Attribute and func.attr.value == "module":
        return True
    inner = func.value if type(func) is cst.Attribute else None
    return type(inner) is cst.Attribute and inner.attr.value == "module"

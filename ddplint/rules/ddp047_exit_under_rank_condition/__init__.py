"""DDP047: a `break` / `return` that only some ranks take, while the others go on to
collectives."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from ddplint.context import Binding, FileContext
from ddplint.diagnostics import Severity
from ddplint.domain import Gate, Side, domain_of
from ddplint.domain.ddp_facts import facts_of
from ddplint.domain.ddp_steps import ddp_backward, trains_ddp_model
from ddplint.domain.option_defaults import option_flag
from ddplint.domain.rank_evidence import rank_evidence
from ddplint.domain.rank_overrides import Override, overridden_names
from ddplint.domain.runners import Runner, runners
from ddplint.engine.flow import fixed_terms
from ddplint.rule import Finding, Rule, register
from ddplint.rules.ddp047_exit_under_rank_condition.continuation import (
    Exit,
    Work,
    clean_exits,
    leavers_end_job,
    left_region,
    others_work,
)


@register
class ExitUnderRankCondition(Rule):
    code = "DDP047"
    name = "exit-under-rank-condition"
    # default: first contact, fresh103 to fresh173 (bench/realworld/first_contact.py): 10 / 3 / 0
    severity = Severity.ERROR
    summary = (
        "`break`/`return`/clean exit under a rank condition while the other ranks go on to "
        "collectives"
    )
    explanation = """
## What it does
Flags a `break` or `return` taken only under a rank condition (`if rank == 0:`, `if rank
== 0 and args.test_only:`), and a process exit with status 0 there inside a loop
(`sys.exit()`, `exit()`, `os._exit(0)`: torchrun ends the job only when a rank fails),
when the ranks it turns away go on to collectives the leaving ranks never issue: the
rest of the pass and the next pass of the loop a `break` leaves or a process exit ends,
or the rest of the function a `return` leaves, reaches `init_process_group` (its
rendezvous waits for every rank; also through a function of this file or a project
helper that starts the group), the DDP constructor (it broadcasts rank 0's parameters),
a `backward()` through a DDP-wrapped model in sight (DDP's gradient all-reduce), a call
of this file's training function handed the DDP model, or, in a loop's next pass, a
collective (`dist.all_reduce`, a helper that always issues one, or a method of a project
class that always does: `meter.synchronize()` on a `Meter` whose `synchronize` returns
early only outside a distributed run). A model stored by a class whose constructor the
project's modules call with a DDP wrapper (`Trainer(DDP(net, ...))` in `train.py`) is a
DDP model in the class's methods. A test on a value only
some ranks change counts as a rank condition (`if completed >= max_steps: break` where
`completed += 1` runs under `if rank == 0:`: the ranks read different values), and so
does an attribute of the instance its class sets on every rank only to constants or
loaded state and changes only under a rank condition or in a method called only under
one (`self._track_best(...)` under `if rank == 0:` setting `self.stop_training = True`),
within the loop that tests it.

Left alone: exits whose other branch leaves too (`if rank == 0: ...; break` / `else:
break`), exits after which the other ranks leave on the same flag (`if args.test_only:
return`), code that runs on one rank anyway (every call of its function is rank-gated, a
branch only a non-distributed run takes), and collectives written after the `if` of a
`return` (DDP010 reports those), and a `break` after which the ranks that left end
their own process with a failure before any collective (`os.kill(os.getpid(),
signal.SIGKILL)`, `sys.exit(1)`): `mp.spawn` and torchrun then end the waiting ranks. A
gate whose rank is only spelled in a name (`if self.is_master:`) makes the finding
unproven (`--preview`), and so does an exit that also waits on a flag set out of sight
(`if callbacks.stop_training:`, an attribute of a parameter or of an object of another
module that this file never assigns).

## Why is this bad?
Collectives are matched by call order across the ranks of the group. When rank 0 leaves
the epoch loop on its own early-stopping decision, or returns from `main` after a
`--test-only` evaluation, the other ranks start the next step and wait in DDP's gradient
all-reduce (or its constructor's broadcast) for a rank that is not coming: the job hangs
until the NCCL watchdog or gloo timeout, and torchrun does not end it, since the rank that
left exits cleanly.

## Example
```python
for epoch in range(epochs):
    train_one_epoch(model, loader, optimizer)
    if rank == 0:
        val_loss = evaluate(model.module, val_loader)
        if stopper.early_stop(val_loss):
            break
```

## Use instead
```python
for epoch in range(epochs):
    train_one_epoch(model, loader, optimizer)
    stop = torch.zeros(1, device=device)
    if rank == 0:
        val_loss = evaluate(model.module, val_loader)
        stop.fill_(float(stopper.early_stop(val_loss)))
    dist.broadcast(stop, src=0)  # every rank takes rank 0's decision
    if stop.item():
        break
```

## Fix safety
No automatic fix: the decision has to be shared through a collective, or the exit moved
out of the rank condition.

## References
- https://pytorch.org/docs/stable/distributed.html#collective-functions
- https://pytorch.org/docs/stable/notes/ddp.html
"""
    flag = (
        """
import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def fit_one_epoch(model, loader, optimizer):
    for x, y in loader:
        loss = model(x, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

def main(net, loader, val_loss_of, epochs):
    rank = int(os.environ["RANK"])
    dist.init_process_group("nccl")
    model = DDP(net.cuda(), device_ids=[int(os.environ["LOCAL_RANK"])])
    optimizer = torch.optim.Adam(model.parameters())
    best = float("inf")
    for epoch in range(epochs):
        fit_one_epoch(model, loader, optimizer)
        if rank == 0:
            val_loss = val_loss_of(model.module)
            if val_loss > best:
                break
            best = val_loss
""",
        """
import argparse
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def main(args, net, val_loader, train_loader):
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    if rank == 0 and args.test_only:
        print(sum(net(x).sum().item() for x in val_loader))
        return
    model = DDP(net.cuda(), device_ids=[torch.cuda.current_device()])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x in train_loader:
        optimizer.zero_grad()
        model(x).sum().backward()
        optimizer.step()
""",
        """
import time
import torch
import torch.distributed as dist

def train(model, loader, optimizer, deadline):
    dist.init_process_group("nccl")
    for step, batch in enumerate(loader):
        loss = model(batch).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        dist.all_reduce(loss.detach())
        if dist.get_rank() == 0 and time.time() > deadline:
            break
""",
    )
    allow = (
        """
import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def main(net, loader, val_loss_of, epochs):
    rank = int(os.environ["RANK"])
    dist.init_process_group("nccl")
    model = DDP(net.cuda(), device_ids=[int(os.environ["LOCAL_RANK"])])
    optimizer = torch.optim.Adam(model.parameters())
    for epoch in range(epochs):
        for x, y in loader:
            optimizer.zero_grad()
            model(x, y).backward()
            optimizer.step()
        stop = torch.zeros(1, device="cuda")
        if rank == 0:
            stop.fill_(float(val_loss_of(model.module) > 1.0))
        dist.broadcast(stop, src=0)
        if stop.item():
            break
""",
        """
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def main(args, net, val_loader, train_loader):
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    if args.test_only:
        if rank == 0:
            print(sum(net(x).sum().item() for x in val_loader))
        return
    model = DDP(net.cuda(), device_ids=[torch.cuda.current_device()])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x in train_loader:
        optimizer.zero_grad()
        model(x).sum().backward()
        optimizer.step()
    if rank == 0:
        torch.save(model.module.state_dict(), "final.pt")
        return
""",
        """
import time
import torch
import torch.distributed as dist

def train(model, loader, optimizer, deadline, preview_batches, save_grid):
    dist.init_process_group("nccl")
    for step, batch in enumerate(loader):
        loss = model(batch).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if dist.get_rank() == 0 and step % 100 == 0:
            for i, images in enumerate(preview_batches):
                if i >= 4:
                    break
                save_grid(images, f"step{step}_{i}.png")
        stop = torch.tensor([float(time.time() > deadline)], device=loss.device)
        dist.all_reduce(stop, op=dist.ReduceOp.MAX)
        if stop.item():
            break
""",
        """
import os
import signal
import torch.distributed as dist

def train(rank, model, loader, epochs, patience, val_loss_of):
    dist.init_process_group("nccl", rank=rank, world_size=4)
    best, stale = float("inf"), 0
    for epoch in range(epochs):
        for x in loader:
            model(x).sum().backward()
        if rank == 0:
            loss = val_loss_of(model)
            best, stale = min(best, loss), 0 if loss < best else stale + 1
            if stale > patience:
                break
        dist.barrier()
    if rank == 0:
        print("best", best)
        os.kill(os.getpid(), signal.SIGKILL)  # mp.spawn then ends the ranks in the barrier
""",
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        gates = domain_of(ctx).gates
        evidence = None
        exits: list[Exit] = [
            node for node in ctx.nodes_of(cst.Break, cst.Return) if isinstance(node, Exit)
        ]
        exits += clean_exits(ctx)
        for node in exits:
            gate = gates.gate(node)
            override = None
            if gate is None:
                gate, override = _overridden_gate(ctx, node)
            if gate is None or not _decides(ctx, node, gate):
                continue
            region = left_region(ctx, node)
            if region is None or not ctx.is_inside(gate.node, region):
                continue  # the whole loop (function) runs under the gate
            work = others_work(ctx, node, gate, region)
            if work is None or _others_leave_too(ctx, gate, work):
                continue
            if leavers_end_job(ctx, node, gate, region):
                continue
            evidence = evidence or rank_evidence(ctx)
            traced = evidence.gate_traced(override.gate if override else gate)
            yield Finding(
                node,
                _message(ctx, node, gate, region, work, override),
                unproven=not traced or _flag_out_of_sight(ctx, node, gate),
            )


def _overridden_gate(ctx: FileContext, node: Exit) -> tuple[Gate | None, Override | None]:
    """The innermost `if` around `node` whose test reads a value only some ranks change
    (`if global_step >= max_steps: break` where `global_step += 1` runs under `if rank ==
    0:`): a gate on the ranks whose value passes the test."""
    for condition in ctx.flow.conditions(node):
        if condition.early_exit or type(condition.gate) is not cst.If:
            continue
        overrides = overridden_names(ctx, condition.test, condition.gate)
        if overrides:
            return Gate(condition.gate, Side.SOME, condition), overrides[0]
    return None, None


def _decides(ctx: FileContext, node: Exit, gate: Gate) -> bool:
    """The gate is a branch around the exit (not an earlier early exit, nor a decorator),
    its other branch does not leave as well, and the code does not run on one process
    anyway (`ddplint.domain.runners`: every call of its function rank-gated, here or in
    another module, a non-distributed branch)."""
    condition = gate.condition
    if condition is None or condition.early_exit or type(gate.node) is not cst.If:
        return False
    other = gate.turned_away
    if other is not None and ctx.flow.leaves(other):
        return False
    found = runners(ctx, gate.node)
    return Runner.EVERY_RANK in found or Runner.UNKNOWN in found


def _flag_out_of_sight(ctx: FileContext, node: Exit, gate: Gate) -> bool:
    """Besides the rank gate, the exit waits on a flag set out of sight: a test that is
    only an attribute (`if callbacks.stop_training:`) of a parameter or of an object built
    by a call this file does not define, and that this file never assigns nor declares as
    a command-line option. Whether
    anything ever sets it is not known here."""
    for condition in ctx.flow.conditions(node):
        if condition.gate is gate.node:
            continue
        test = condition.test
        while type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
            test = test.expression
        if not (type(test) is cst.Attribute and type(test.value) is cst.Name):
            continue
        if option_flag(ctx, test, condition.gate) is not None:
            continue  # `if args.early_stop:`, an option the file declares: the user's
        owner = test.value.value
        key = f"{owner}.{test.attr.value}"
        if any(
            type(t) is cst.AssignTarget and ctx.code(t.target).strip() == key
            for t in ctx.nodes_of(cst.AssignTarget)
        ):
            continue
        bindings = ctx.resolver.reaching(owner, condition.gate)
        if bindings and all(_built_out_of_sight(ctx, b) for b in bindings):
            return True
    return False


def _built_out_of_sight(ctx: FileContext, binding: Binding) -> bool:
    if binding.kind == "param":
        return True
    value = binding.value
    return binding.kind == "assign" and type(value) is cst.Call and not ctx.resolver.callees(value)


def _others_leave_too(ctx: FileContext, gate: Gate, work: Work) -> bool:
    """Where the gate lets the exit be taken, the other ranks do not reach the work
    either: a condition of the work fixes a term of the gate's test the other way
    (`if args.test_only: return` after `if rank == 0 and args.test_only: return`)."""
    condition = gate.condition
    assert condition is not None
    code = ctx.code
    exit_terms = {code(t).strip(): v for t, v in fixed_terms(condition.test, condition.holds)}
    for other in ctx.flow.conditions(work.call):
        if other.gate is gate.node:
            continue
        for term, value in other.terms():
            if exit_terms.get(code(term).strip()) == (not value):
                return True
    return False


def _message(
    ctx: FileContext,
    node: Exit,
    gate: Gate,
    region: cst.CSTNode,
    work: Work,
    override: Override | None = None,
) -> str:
    where = gate.describe(ctx.code(gate.test).strip())
    if override is not None:
        changed = override.describe(ctx)
        where += f" ({override.shown} changes {changed}, so the ranks read different values)"
    if type(node) is cst.Call:
        leaves = (
            f"`{ctx.code(node).strip()}` ends this process with status 0 {where} (torchrun "
            "keeps the other ranks running)"
        )
        then = "start its next pass and reach" if work.next_pass else "go on to"
    elif type(region) is cst.FunctionDef:
        leaves = f"`return` ends `{region.name.value}()` {where}"
        then = "go on to"
    else:
        leaves = f"`break` leaves the loop {where}"
        then = "start its next pass and reach" if work.next_pass else "go on to"
    call = ctx.code(work.call).strip()
    if len(call) > 60:
        call = f"{ctx.code(work.call.func).strip()}(...)"
    reached = f"`{call}` ({work.issues})"
    if work.next_pass and _trains_through_ddp(ctx, region, work.call):
        # the next pass's backward all-reduces the gradients before the call is reached
        reached = f"the gradient all-reduce of its DDP backward, then {reached}"
    return (
        f"{leaves}; the ranks it turns away {then} {reached}, which the "
        "ranks that left never match: the others wait there (a hang until the collective "
        "timeout) or pair it with an unrelated collective; take the exit on every rank "
        "(broadcast the decision first) or leave only after the collectives"
    )


def _trains_through_ddp(ctx: FileContext, region: cst.CSTNode, call: cst.Call) -> bool:
    """`region` is a loop whose pass runs `backward()` through a DDP model before `call`
    (itself, or through a function of this file handed one): the first collective the
    pass issues is the gradient all-reduce, not `call`."""
    facts = facts_of(ctx)
    if not isinstance(region, (cst.For, cst.While)) or not (facts.ddp_wraps or facts.helper_wraps):
        return False
    for earlier in ctx.calls_within(region.body):
        if earlier is call or not ctx.before(earlier, call) or ctx.is_inside(call, earlier):
            continue
        if ddp_backward(ctx, earlier) or trains_ddp_model(ctx, earlier):
            return True
    return False

"""DDP044: weights or optimizer state loaded on the main rank only, after the DDP wrap."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from ddplint.context import FileContext
from ddplint.diagnostics import Severity
from ddplint.domain import domain_of
from ddplint.domain.one_rank_calls import other_branch_calls
from ddplint.domain.rank_evidence import rank_evidence
from ddplint.domain.ranks import Side
from ddplint.domain.synced_calls import Synced, synced_calls
from ddplint.rule import Finding, Rule, register
from ddplint.rules.ddp044_state_loaded_on_main_rank.loaded_state import (
    LoadedState,
    loaded_state,
    refuses_bare_keys,
    runs_after,
    synced_again,
)


@register
class StateLoadedOnMainRank(Rule):
    code = "DDP044"
    name = "state-loaded-on-main-rank"
    severity = Severity.ERROR
    # opt-in: first contact, fresh103 to fresh169 (bench/realworld/first_contact.py): 6 / 3 / 0
    default = False
    summary = "Weights or optimizer state loaded on the main rank only, after the DDP wrap"
    explanation = """
## What it does
Flags `load_state_dict(...)` on a DDP-wrapped model (or its `.module`), or on an optimizer
or learning-rate scheduler, under a test only the main rank passes (`if rank == 0:`),
when DDP training steps follow it on every rank: a backward through the DDP model, in
sight, after the load (or in the loop around it). Also flags a learning-rate scheduler's
`step()` under a test only some ranks pass (`if rank == 0: scheduler.step(val_loss)`),
whose other branch does not step it, when such training steps follow.

Left alone: a load before the wrap (DDP broadcasts rank 0's parameters and buffers when it
is built), a load followed by a new wrap or a broadcast of the state, a load into a model
only the main rank uses afterwards (a final evaluation), and branches that run only when
the job is not distributed. Where the training steps run in a function out of sight, or
the test spells the rank only in a name, the finding is shown only under `--preview`,
marked unproven.

## Why is this bad?
DDP makes the replicas equal once, in its constructor, and never compares parameters
again: each step averages the gradients and every rank applies the same update to its own
copy. Weights loaded into rank 0's copy after that point stay on rank 0; the other ranks
keep theirs, and from then on the job averages the gradients of N different models, a
model no single rank holds. Optimizer state (momentum, Adam moments, the learning rate in
`param_groups`) or a scheduler's position loaded on rank 0 only makes rank 0 apply other
updates than the rest, and the copies drift apart step by step. Nothing fails: the run
trains on, and the checkpoint rank 0 saves is not the model the others trained.

## Example
```python
model = DDP(net, device_ids=[local_rank])
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
if dist.get_rank() == 0 and args.resume:
    state = torch.load(args.resume, map_location="cpu")
    model.module.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
```

## Use instead
```python
if args.resume:  # every rank loads the same file
    state = torch.load(args.resume, map_location="cpu")
    net.load_state_dict(state["model"])
model = DDP(net, device_ids=[local_rank])
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
if args.resume:
    optimizer.load_state_dict(state["optimizer"])
```

## Fix safety
No fix is offered: load on every rank (mapped to the CPU or to each rank's GPU), or load
before the wrap and let DDP broadcast the weights; optimizer state needs every rank.

## References
- https://pytorch.org/docs/stable/notes/ddp.html#internal-design
- https://pytorch.org/tutorials/intermediate/ddp_tutorial.html#save-and-load-checkpoints
"""
    flag = (
        """
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def main(args, loader, local_rank):
    dist.init_process_group("nccl")
    model = DDP(torch.nn.Linear(4, 4).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    if dist.get_rank() == 0 and args.resume:
        state = torch.load(args.resume, map_location="cpu")
        model.module.load_state_dict(state["model"])
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
""",
        """
import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def main(loader):
    dist.init_process_group("nccl")
    rank = int(os.environ["RANK"])
    model = DDP(torch.nn.Linear(4, 4).cuda())
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    if rank == 0:
        optimizer.load_state_dict(torch.load("opt.pt", map_location="cpu"))
    for x in loader:
        model(x).sum().backward()
        optimizer.step()
""",
        """
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def train_epoch(model, loader, optimizer):
    for x, y in loader:
        loss = torch.nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

def main(loader, epochs):
    dist.init_process_group("nccl")
    model = DDP(torch.nn.Linear(8, 2).cuda())
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10)
    if dist.get_rank() == 0:
        scheduler.load_state_dict(torch.load("sched.pt"))
    for epoch in range(epochs):
        train_epoch(model, loader, optimizer)
        scheduler.step()
""",
    )
    allow = (
        """
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def main(args, loader, local_rank):
    dist.init_process_group("nccl")
    net = torch.nn.Linear(4, 4).cuda()
    if dist.get_rank() == 0 and args.resume:
        net.load_state_dict(torch.load(args.resume, map_location="cpu"))
    model = DDP(net, device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
""",
        """
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def main(loader, test_loader):
    dist.init_process_group("nccl")
    model = DDP(torch.nn.Linear(4, 2).cuda())
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        loss = torch.nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    if dist.get_rank() == 0:
        model.module.load_state_dict(torch.load("best.pt", map_location="cpu"))
        with torch.no_grad():
            for x, y in test_loader:
                print((model.module(x).argmax(1) == y).float().mean())
""",
        """
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def main(loader):
    dist.init_process_group("nccl")
    model = DDP(torch.nn.Linear(4, 4).cuda())
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    if dist.get_rank() == 0:
        model.module.load_state_dict(torch.load("init.pt", map_location="cpu"))
    for p in model.module.parameters():
        dist.broadcast(p.data, src=0)
    for x in loader:
        model(x).sum().backward()
        optimizer.step()
""",
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        gates = domain_of(ctx).gates
        evidence = None
        for call in ctx.method_calls("load_state_dict"):
            state = loaded_state(ctx, call)
            if state is None:
                continue
            gate = gates.gate(call)
            if gate is None or gate.side is not Side.MAIN or gates.opens_to_every_rank(gate):
                continue
            if gates.single_process(call):
                continue
            trained = _trained_after(ctx, call)
            if trained is Synced.NO:
                continue
            evidence = evidence or rank_evidence(ctx)
            where = gate.describe(ctx.code(gate.test).strip())
            message = _message(ctx, call, state, where)
            refused = state is LoadedState.MODEL and refuses_bare_keys(ctx, call)
            if refused:
                message += (
                    " (unproven: the keys lose their `module.` prefix before this strict "
                    "load into the DDP wrapper, which then raises and loads nothing)"
                )
            yield Finding(
                call,
                message,
                unproven=trained is Synced.UNKNOWN or not evidence.gate_traced(gate) or refused,
            )
        yield from _scheduler_steps(ctx)


def _trained_after(ctx: FileContext, call: cst.Call) -> Synced:
    """Whether DDP training steps follow `call` on every rank (`Synced.NO` also where a
    later call makes the ranks equal again: a new wrap, a broadcast of the state)."""
    gates = domain_of(ctx).gates
    after = runs_after(ctx, call)
    if synced_again(ctx, after):
        return Synced.NO
    trained, _ = synced_calls(ctx, [c for c in after if gates.gate(c) is None], training_only=True)
    return trained


def _scheduler_steps(ctx: FileContext) -> Iterator[Finding]:
    """`scheduler.step()` of a learning-rate scheduler on some ranks only (its other branch
    not stepping it), when DDP training steps follow on every rank and nothing broadcasts
    the state again."""
    gates = domain_of(ctx).gates
    evidence = None
    for call in ctx.method_calls("step"):
        if loaded_state(ctx, call) is not LoadedState.SCHEDULER:
            continue
        gate = gates.gate(call)
        if gate is None or gates.opens_to_every_rank(gate) or gates.single_process(call):
            continue
        if other_branch_calls(ctx, gate.node, call):
            continue  # `if rank == 0: ...; scheduler.step() else: scheduler.step()`
        trained = _trained_after(ctx, call)
        if trained is Synced.NO:
            continue
        evidence = evidence or rank_evidence(ctx)
        where = gate.describe(ctx.code(gate.test).strip())
        yield Finding(
            call,
            f"`{ctx.code(call.func)}(...)` runs {where}: the schedule of the other ranks "
            "never moves, so their learning rate differs from the stepping ranks' and the "
            "replicas drift apart (DDP averages gradients, not updates); step the scheduler "
            "on every rank, after agreeing on any metric it reads",
            unproven=trained is Synced.UNKNOWN or not evidence.gate_traced(gate),
        )


def _message(ctx: FileContext, call: cst.Call, state: LoadedState, where: str) -> str:
    loaded = f"`{ctx.code(call.func)}(...)` runs {where}"
    if state is LoadedState.MODEL:
        return (
            f"{loaded}, after the DDP wrap: DDP copies rank 0's weights to the other ranks "
            "only when it is built, so they keep their own and every later step averages "
            "the gradients of different models; load on every rank, or before the wrap"
        )
    kept = {
        LoadedState.OPTIMIZER: "a fresh optimizer state (momentum or Adam moments, learning rate)",
        LoadedState.SCHEDULER: "the schedule's first position, hence another learning rate",
    }[state]
    return (
        f"{loaded}: the other ranks keep {kept}, so their updates differ from rank 0's and "
        "the replicas drift apart; load it on every rank"
    )

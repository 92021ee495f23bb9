"""DDP043: a training loop whose number of iterations one rank changes on its own."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from ddplint.context import FileContext
from ddplint.diagnostics import Severity
from ddplint.domain import domain_of
from ddplint.domain.rank_evidence import rank_evidence
from ddplint.domain.rank_overrides import Override, rank_overrides
from ddplint.domain.runners import every_rank
from ddplint.domain.synced_calls import Synced, synced_calls
from ddplint.rule import Finding, Rule, register


@register
class RankDependentLoopCount(Rule):
    code = "DDP043"
    name = "rank-dependent-loop-count"
    severity = Severity.ERROR
    # opt-in: first contact, fresh103 to fresh171 (bench/realworld/first_contact.py): 0 / 2 / 1
    default = False
    summary = "Training loop bound set on one rank only: the ranks run different step counts"
    explanation = """
## What it does
Flags a `for ... in range(...)` loop that every rank runs, whose bounds read a variable
that one side of a rank test reassigns (`start_epoch = 0`, then under `if rank == 0:`
`start_epoch = checkpoint["epoch"]`), when the loop runs DDP training or a collective:
a `backward()` through a DDP model, a `torch.distributed` collective, or a function of the
file that does one of these. Also a `while` loop whose test reads a value only some ranks
change (`while global_step < n_iters:` with `global_step += 1` indented under the rank-0
logging block): only those ranks ever reach the bound. A value the two branches of one
rank test set differently counts too (`if args.resume and rank == 0: start_epoch =
ckpt["epoch"]` / `else: start_epoch = 0`) unless a collective after the test overwrites
it in place (`dist.broadcast(start, src=0)`), and a bound that is a parameter of the loop's
function is followed into the calls of the file that pass it (`train(model, start_epoch,
...)`).

Left alone: a value every rank computes (each rank loads the checkpoint), a value
reassigned on every rank after the test (broadcast from rank 0 and read back), a value
both sides of the test assign, and loops that run no collective. Where the loop's step
runs in a function out of sight, or the test spells the rank only in a name, the finding
is shown only under `--preview`, marked unproven.

## Why is this bad?
Collectives are matched by the order in which each rank issues them. A rank that runs
fewer iterations leaves the loop while the others still issue gradient all-reduces: they
wait for it until the NCCL watchdog (or the gloo timeout) ends the job, typically at the
end of training; before that, every collective after the loop pairs with the wrong one.
On one process there is only one rank, so the bug shows only in distributed runs,
typically after a resume.

## Example
```python
start_epoch = 0
if dist.get_rank() == 0 and args.resume:
    checkpoint = torch.load(args.resume, map_location="cpu")
    model.module.load_state_dict(checkpoint["model"])
    start_epoch = checkpoint["epoch"] + 1
for epoch in range(start_epoch, args.epochs):
    train_one_epoch(model, loader, optimizer)
```

## Use instead
```python
start_epoch = 0
if args.resume:  # every rank loads the checkpoint
    checkpoint = torch.load(args.resume, map_location="cpu")
    model.module.load_state_dict(checkpoint["model"])
    start_epoch = checkpoint["epoch"] + 1
for epoch in range(start_epoch, args.epochs):
    train_one_epoch(model, loader, optimizer)
```

## Fix safety
No fix is offered: load on every rank, or broadcast the value
(`dist.broadcast_object_list`), depending on what else the rank-0 block restores.

## References
- https://pytorch.org/docs/stable/distributed.html#collective-functions
- https://pytorch.org/tutorials/intermediate/ddp_tutorial.html#save-and-load-checkpoints
"""
    flag = (
        """
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def main(args, loader):
    dist.init_process_group("nccl")
    model = DDP(torch.nn.Linear(4, 4).cuda())
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    start_epoch = 0
    if dist.get_rank() == 0 and args.resume:
        checkpoint = torch.load(args.resume, map_location="cpu")
        model.module.load_state_dict(checkpoint["model"])
        start_epoch = checkpoint["epoch"] + 1
    for epoch in range(start_epoch, args.epochs):
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

def main(total_steps):
    dist.init_process_group("nccl")
    rank = int(os.environ["RANK"])
    steps = total_steps
    if rank != 0:
        steps = total_steps - 1
    for step in range(steps):
        t = torch.ones(1)
        dist.all_reduce(t)
""",
        """
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def train_one_epoch(model, loader, optimizer):
    for x, y in loader:
        loss = model(x).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

def main(args, loader):
    dist.init_process_group("nccl")
    model = DDP(torch.nn.Linear(4, 4).cuda())
    optimizer = torch.optim.Adam(model.parameters())
    epochs = args.epochs
    if dist.get_rank() == 0:
        epochs = args.epochs + args.warmup_epochs
    for epoch in range(epochs):
        train_one_epoch(model, loader, optimizer)
""",
    )
    allow = (
        """
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def main(args, loader):
    dist.init_process_group("nccl")
    model = DDP(torch.nn.Linear(4, 4).cuda())
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    start_epoch = 0
    if args.resume:
        checkpoint = torch.load(args.resume, map_location="cpu")
        start_epoch = checkpoint["epoch"] + 1
    for epoch in range(start_epoch, args.epochs):
        for x, y in loader:
            loss = model(x).sum()
            loss.backward()
""",
        """
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def main(args, loader):
    dist.init_process_group("nccl")
    model = DDP(torch.nn.Linear(4, 4).cuda())
    start_epoch = 0
    if dist.get_rank() == 0:
        start_epoch = torch.load(args.resume)["epoch"]
    holder = [start_epoch]
    dist.broadcast_object_list(holder, src=0)
    start_epoch = holder[0]
    for epoch in range(start_epoch, args.epochs):
        for x, y in loader:
            model(x).sum().backward()
""",
        """
import torch
import torch.distributed as dist

def main(args):
    dist.init_process_group("nccl")
    shown = 3
    if dist.get_rank() == 0:
        shown = 10
    for i in range(shown):
        print(i)
""",
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        gates = domain_of(ctx).gates
        evidence = None
        for loop in ctx.nodes_of(cst.For, cst.While):
            assert isinstance(loop, (cst.For, cst.While))
            overrides = rank_overrides(ctx, loop)
            if not overrides or gates.gate(loop) is not None or gates.single_process(loop):
                continue
            where = every_rank(ctx, loop)
            if where is False:
                continue  # every call of its function runs on one rank or in one process
            synced, issued = synced_calls(ctx, ctx.calls_within(loop.body))
            if synced is Synced.NO:
                continue
            evidence = evidence or rank_evidence(ctx)
            traced = all(evidence.gate_traced(o.gate) for o in overrides)
            yield Finding(
                _head(loop),
                _message(ctx, loop, overrides[0], issued),
                unproven=synced is Synced.UNKNOWN or not traced or where is None,
            )


def _head(loop: cst.For | cst.While) -> cst.BaseExpression:
    """What decides the loop's passes: a `for`'s iterable, a `while`'s test."""
    return loop.iter if isinstance(loop, cst.For) else loop.test


def _message(ctx: FileContext, loop: cst.For | cst.While, override: Override, issued: str) -> str:
    where = override.describe(ctx)
    changed = "reassigned" if type(loop) is cst.For else "changed"
    return (
        f"`{ctx.code(_head(loop)).strip()}` can run a different number of times on different "
        f"ranks: {override.shown} is {changed} {where}; each pass issues {issued}, so "
        "the ranks with more passes wait in collectives the others never issue (a hang); "
        "compute the value on every rank or broadcast it"
    )

"""DDP042: a variable bound only on the main rank and read on every rank."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from ddplint.context import FileContext
from ddplint.diagnostics import Severity
from ddplint.domain import domain_of
from ddplint.domain.command_line import same_on_every_rank
from ddplint.domain.gates import Gate
from ddplint.domain.rank_evidence import rank_evidence
from ddplint.domain.ranks import Side
from ddplint.domain.runners import every_rank
from ddplint.rule import Finding, Rule, register
from ddplint.rules.ddp042_name_bound_on_main_rank.reads import (
    bound_otherwise,
    caught_name_error,
    conditions_since,
    in_lambda,
    rank_correlated,
    reads_of_names,
)


@register
class NameBoundOnMainRank(Rule):
    code = "DDP042"
    name = "name-bound-on-main-rank"
    severity = Severity.ERROR
    summary = "A variable bound only on the main rank is read on every rank"
    explanation = """
## What it does
Flags a read of a local (or module-level) variable that every rank runs, where every
assignment that can reach the read sits under a test that only the main rank passes
(`if rank == 0:`, `if args.local_rank in (-1, 0):`, after `if rank != 0: return`). The
assignment and the read must be in the same function (or both at module level).

Left alone: a variable bound before the test as well (`writer = None`), bound in the `else`
branch, a read under the same test or under a test of a value bound under a rank test
(`if run is not None:`), a read inside `try` that catches `NameError`, and a branch that
runs only when the job is not distributed. Where the test spells the rank only in a name
the analysis cannot follow, the function's callers are out of sight, or the read sits under
a condition other than command-line options (`if args.resume:`), the finding is shown only
under `--preview`, marked unproven.

## Why is this bad?
On one process the main rank is the only rank, so the script works. With N processes the
other N - 1 never run the assignment, reach the read, and raise `NameError` (or
`UnboundLocalError` inside a function): the job stops, typically at resume, at the first
log line or at the end of the first epoch, and only when run distributed.

## Example
```python
if dist.get_rank() == 0:
    save_dir = make_run_dir(args)
...
checkpoint = torch.load(os.path.join(save_dir, "last.pt"), map_location="cpu")
```

## Use instead
```python
save_dir = make_run_dir(args)  # the same on every rank; create it on rank 0 only
if dist.get_rank() == 0:
    os.makedirs(save_dir, exist_ok=True)
dist.barrier()
checkpoint = torch.load(os.path.join(save_dir, "last.pt"), map_location="cpu")
```

## Fix safety
No fix is offered: whether the other ranks need the value itself (then compute it on every
rank, or broadcast it) or a placeholder (`writer = None`) is the author's choice.

## References
- https://pytorch.org/tutorials/intermediate/ddp_tutorial.html
- https://docs.python.org/3/reference/executionmodel.html#resolution-of-names
"""
    flag = (
        """
import torch
import torch.distributed as dist

def main():
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    if rank == 0:
        logger = open("train.log", "a")
    for step in range(10):
        logger.write(f"step {step}\\n")
""",
        """
import os
import torch
import torch.distributed as dist

dist.init_process_group("nccl")
if int(os.environ["RANK"]) == 0:
    save_path = os.path.join("runs", "exp")
state = torch.load(os.path.join(save_path, "last.pt"), map_location="cpu")
""",
        """
import argparse
import torch
import torch.distributed as dist
from torch.utils.tensorboard import SummaryWriter

def train(args, model, loader):
    if args.local_rank in [-1, 0]:
        tb_writer = SummaryWriter(log_dir="runs")
    for step, (x, y) in enumerate(loader):
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        tb_writer.add_scalar("loss", loss.item(), step)

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=-1)
    args = parser.parse_args()
    dist.init_process_group("nccl")
    train(args, torch.nn.Linear(4, 4), [])
""",
    )
    allow = (
        """
import torch
import torch.distributed as dist

def main():
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    writer = None
    if rank == 0:
        writer = open("train.log", "a")
    for step in range(10):
        if writer is not None:
            writer.write(f"step {step}\\n")
""",
        """
import torch
import torch.distributed as dist

def main():
    dist.init_process_group("nccl")
    if dist.get_rank() == 0:
        best = 0.0
    for epoch in range(10):
        if dist.get_rank() == 0:
            best = max(best, float(epoch))
            print(best)
""",
        """
import torch
import torch.distributed as dist

def main():
    dist.init_process_group("nccl")
    if dist.get_rank() == 0:
        path = "a.pt"
    else:
        path = "b.pt"
    torch.save({}, path)
""",
        """
import torch
import torch.distributed as dist

def summary(rank, losses):
    if rank == 0:
        mean = sum(losses) / len(losses)
    print(f"mean loss {mean:.3f}")

def main():
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    if rank == 0:
        summary(rank, [1.0, 2.0])
""",
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        domain = domain_of(ctx)
        gates, resolver = domain.gates, ctx.resolver
        model = resolver.model
        # Each binding's gate, asked once: most variables are read more often than bound.
        gate_of: dict[int, tuple[cst.CSTNode, Gate | None]] = {}

        def binding_gate(statement: cst.CSTNode) -> Gate | None:
            if id(statement) not in gate_of:
                gate_of[id(statement)] = (statement, gates.gate(statement))
            return gate_of[id(statement)][1]

        # A read is reported only where every binding reaching it is under a main-rank
        # gate: only the names with such a binding are read at all.
        candidates = {
            name
            for name, bindings in model.bindings.items()
            if "." not in name
            and any(
                (g := binding_gate(b.statement)) is not None and g.side is Side.MAIN
                for b in bindings
            )
        }
        if not candidates:
            return
        others = bound_otherwise(ctx)
        evidence = None
        for read in reads_of_names(ctx, candidates):
            reaching = resolver.reaching(read.value, read)
            frame, owner = model.frame(read), model.owner(read)
            if not reaching or any(b.scope is not frame or b.owner is not owner for b in reaching):
                continue
            if {(frame, read.value), (frame, "*")} & others:
                continue
            binding_gates = [binding_gate(b.statement) for b in reaching]
            if any(
                g is None or g.side is not Side.MAIN or gates.opens_to_every_rank(g)
                for g in binding_gates
            ):
                continue
            # Walks up the tree: asked only of the few reads left.
            if in_lambda(ctx, read) or caught_name_error(ctx, read):
                continue
            if gates.gate(read) is not None or gates.single_process(read):
                continue
            reached = every_rank(ctx, read)
            if reached is False:
                continue  # every call of its function runs on one rank or in one process
            tests = conditions_since(ctx, read, [b.statement for b in reaching])
            if any(rank_correlated(ctx, test, read) for test in tests):
                continue
            evidence = evidence or rank_evidence(ctx)
            traced = all(g is not None and evidence.gate_traced(g) for g in binding_gates)
            gate = binding_gates[0]
            assert gate is not None
            where = gate.describe(ctx.code(gate.test).strip())
            yield Finding(
                read,
                f"`{read.value}` is bound only on the main rank (assigned {where}) "
                "but read here on every rank: with more than one process the other ranks "
                f"raise {_error(frame)} here",
                unproven=not traced
                or reached is None
                or not all(same_on_every_rank(ctx, test, read) for test in tests),
            )


def _error(frame: cst.CSTNode) -> str:
    return "UnboundLocalError" if type(frame) is cst.FunctionDef else "NameError"

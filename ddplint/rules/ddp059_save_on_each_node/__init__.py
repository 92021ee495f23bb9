"""DDP059: a checkpoint saved where the *local* rank is 0, once per node."""

from __future__ import annotations

import re
from collections.abc import Iterator

import libcst as cst

from ddplint.context import FileContext
from ddplint.diagnostics import Severity
from ddplint.domain import domain_of
from ddplint.domain.checkpoints import is_checkpoint_save, save_path
from ddplint.domain.node_counts import runs_on_several_nodes
from ddplint.domain.paths import per_rank_path
from ddplint.domain.project_view import project_of
from ddplint.domain.rank_kinds import RankKind
from ddplint.domain.ranks import int_literal
from ddplint.domain.runners import one_process
from ddplint.domain.test_modules import is_test_module
from ddplint.rule import Finding, Rule, register

# A path named for the machine it is written on: each node writes a file of its own.
_PER_NODE = re.compile(r"node|host|machine|gethostname|platform\.node", re.IGNORECASE)


def _tested_kinds(ctx: FileContext, test: cst.BaseExpression, at: cst.CSTNode) -> set[RankKind]:
    """The kinds of the rank values a gate's test compares (`args.local_rank == 0`:
    LOCAL; `dist.get_rank() == 0`: GLOBAL); none for a test through a helper."""
    kinds: set[RankKind] = set()
    rank_kinds = domain_of(ctx).rank_kinds
    for node in ctx.walk(test):
        if type(node) is not cst.Comparison:
            continue
        for operand in (node.left, *(c.comparator for c in node.comparisons)):
            if int_literal(operand) is not None or isinstance(operand, (cst.List, cst.Tuple)):
                continue
            kind = rank_kinds.kind(operand, at)
            if kind is not None:
                kinds.add(kind)
    return kinds


def _local_rank_gated(ctx: FileContext, call: cst.Call) -> cst.BaseExpression | None:
    """The test of the local-rank gate `call` runs under, when every rank gate it runs
    under compares the local rank only (none the global rank, none through a helper)."""
    gates = domain_of(ctx).gates.gates(call)
    if not gates:
        return None
    for gate in gates:
        if gate.condition is None or _tested_kinds(ctx, gate.condition.test, gate.node) != {
            RankKind.LOCAL
        }:
            return None
    condition = gates[0].condition
    return condition.test if condition is not None else None


def _several_nodes(ctx: FileContext) -> bool:
    project = project_of(ctx)
    imported = project.text_closure(ctx.path) if project is not None else ()
    return runs_on_several_nodes(ctx.path, ctx.source, imported, is_test_module(ctx))


@register
class SaveOnEachNode(Rule):
    code = "DDP059"
    name = "save-on-each-node"
    severity = Severity.WARNING
    default = False  # opt-in until judged at first contact (session 22: tuned sets only)
    summary = "Checkpoint saved where the local rank is 0: every node's first process writes it"
    explanation = """
## What it does
Flags a `torch.save` of a checkpoint that runs only where the *local* rank is 0 (`if
args.local_rank == 0:`, `if int(os.environ["LOCAL_RANK"]) == 0:`; every rank gate around
it compares the local rank, none the global rank), into a path that names neither the rank
nor the machine. Proven where the script shows it runs on more than one node (a node option
such as `--nnodes` or `--node_rank`, a node count or number read from the environment, or a
command of the project that launches several nodes, as DDP018 reads them); elsewhere shown
under `--preview` only, marked unproven. Left alone: a gate on the global rank
(`dist.get_rank() == 0`), a helper whose test is out of sight (`if is_main_process():`), a
per-rank or per-node file, and code that runs in one process.

## Why is this bad?
The local rank numbers the processes of one machine: every node has a local rank 0. With
two nodes, two processes pass `local_rank == 0` and write the same checkpoint at the same
moment; on the shared filesystem multi-node jobs use, the writes interleave or truncate
each other, and a resume reads a corrupt file. On one node the guard is right, so the
mistake hides until the job scales out.

## Example
```python
if args.local_rank == 0:
    torch.save(model.module.state_dict(), f"{args.out}/epoch_{epoch}.pt")
```

## Use instead
```python
if dist.get_rank() == 0:  # one process in the whole job
    torch.save(model.module.state_dict(), f"{args.out}/epoch_{epoch}.pt")
```

## Fix safety
No automatic fix: the global rank may not be in scope where the save is.

## References
- https://pytorch.org/docs/stable/elastic/run.html#environment-variables
"""
    flag = (
        """
import argparse
import torch
import torch.distributed as dist

def save(model, args):
    if args.local_rank == 0:
        torch.save(model.module.state_dict(), f"{args.out}/last.pt")

parser = argparse.ArgumentParser()
parser.add_argument("--nnodes", type=int, default=2)
""",
        """
import os
import torch

def save(model, epoch):
    if int(os.environ["LOCAL_RANK"]) == 0:
        torch.save({"model": model.state_dict(), "epoch": epoch}, "ckpt.pt")

NUM_NODES = int(os.environ["SLURM_NNODES"])
""",
        """
import os
import torch

def save(model, epoch, out):
    local_rank = int(os.environ["LOCAL_RANK"])
    if local_rank != 0:
        return
    torch.save(model.state_dict(), os.path.join(out, f"epoch_{epoch}.pth"))

NODE_RANK = int(os.environ.get("NODE_RANK", 0))
""",
    )
    allow = (
        """
import argparse
import torch
import torch.distributed as dist

def save(model, args):
    if dist.get_rank() == 0:
        torch.save(model.module.state_dict(), f"{args.out}/last.pt")

parser = argparse.ArgumentParser()
parser.add_argument("--nnodes", type=int, default=2)
""",
        """
import os
import socket
import torch

def save(model, epoch):
    if int(os.environ["LOCAL_RANK"]) == 0:
        torch.save(model.state_dict(), f"ckpt_{socket.gethostname()}.pt")

NUM_NODES = int(os.environ["SLURM_NNODES"])
""",
        """
import os
import torch
import torch.distributed as dist

def save(model):
    if int(os.environ["LOCAL_RANK"]) == 0 and dist.get_rank() == 0:
        torch.save(model.state_dict(), "ckpt.pt")

NUM_NODES = int(os.environ["SLURM_NNODES"])
""",
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        several: bool | None = None
        for call in ctx.calls:
            if not is_checkpoint_save(ctx, call):
                continue
            path = save_path(call)
            if path is None or per_rank_path(ctx, path, call) or _PER_NODE.search(ctx.code(path)):
                continue
            test = _local_rank_gated(ctx, call)
            if test is None or one_process(ctx, call):
                continue
            if several is None:
                several = _several_nodes(ctx)
            yield Finding(
                call,
                f"`torch.save` runs where `{ctx.code(test).strip()}` holds, a test of the local "
                "rank: every node has a local rank 0, so with several nodes each node's first "
                f"process writes `{ctx.code(path).strip()}` at the same time (on a shared "
                "filesystem the writes interleave or truncate); test the global rank "
                "(`dist.get_rank() == 0`)",
                unproven=not several,
            )

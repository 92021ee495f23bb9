"""DDP013: a checkpoint written by every rank."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from ddplint.analysis.checkpoints import SAVE, is_checkpoint_save, save_path
from ddplint.analysis.downloads import in_first_context
from ddplint.analysis.paths import per_rank_path
from ddplint.analysis.processes import single_process
from ddplint.analysis.rank_guards import call_sites, guarded_everywhere, single_process_branch
from ddplint.context import FileContext
from ddplint.diagnostics import Severity
from ddplint.rule import Finding, Rule, register

_ENTRY_POINTS = frozenset({"main", "train", "run", "worker", "main_worker"})


def _referenced_elsewhere(ctx: FileContext, func: cst.FunctionDef) -> bool:
    """The function is passed around by name (`mp.spawn(main_worker, ...)`)."""
    name = func.name.value
    for binding_node in ctx.nodes_of(cst.Name):
        if (
            isinstance(binding_node, cst.Name)
            and binding_node.value == name
            and binding_node is not func.name
            and not isinstance(ctx.parent(binding_node), cst.Call)
        ):
            return True
    return False


def _is_entry(ctx: FileContext, func: cst.FunctionDef) -> bool:
    """Nothing in the file calls `func`, but it runs: an entry point by its name (`main`),
    or one handed to a launcher (`mp.spawn(main_worker)`)."""
    return func.name.value in _ENTRY_POINTS or _referenced_elsewhere(ctx, func)


def _outside_calls(ctx: FileContext, func: cst.FunctionDef) -> list[cst.Call]:
    """Calls of `func` in this file, its own recursive calls aside."""
    return [s for s in call_sites(ctx, func) if not ctx.is_inside(s, func)]


def _runs_once(ctx: FileContext, node: cst.CSTNode) -> bool:
    """`node` runs on one rank (a rank gate, here or at every call of its function), in a
    branch that runs without distribution only, or one process at a time (zero-first)."""
    return (
        guarded_everywhere(ctx, node)
        or single_process_branch(ctx, node)
        or in_first_context(ctx, node)
    )


def _per_rank_arguments(ctx: FileContext, call: cst.Call) -> bool:
    """An argument is a file name built from the rank: the callee writes per-rank files."""
    return any(ctx.domain.ranks.rank_in_text(arg.value) for arg in call.args)


@register
class CheckpointEveryRank(Rule):
    code = "DDP013"
    name = "checkpoint-every-rank"
    severity = Severity.WARNING
    summary = "`torch.save` runs on every rank: all processes write the same checkpoint file"
    explanation = """
## What it does
Flags a `torch.save(...)` that every rank runs: no rank-0 guard around it, in its function
or at every call of that function in the file. Also flags the unguarded call of a helper
(of this file or of the project) that saves without a guard of its own.

Left alone: saves under `if rank == 0:` / `if is_main_process():` or after
`if not main: return`, saves inside a function only called under such a guard,
`save_on_master`-style helpers that guard inside, files whose path holds the rank
(intentional per-rank shards), saves into an in-memory buffer, saves inside
`with torch_distributed_zero_first(rank):`-style blocks, branches that only run without
distribution (`if not args.distributed:`), and helpers no code in the file calls (their
callers' files decide).

## Why is this bad?
All N processes write the same file at the same time: N times the I/O, and on a shared
file system concurrent writers can interleave and leave a corrupt checkpoint. The replicas
hold identical weights after each step, so one writer is enough.

## Example
```python
for epoch in range(epochs):
    train_one_epoch(model, loader, optimizer)
    torch.save(model.module.state_dict(), "checkpoint.pt")
```

## Use instead
```python
for epoch in range(epochs):
    train_one_epoch(model, loader, optimizer)
    if dist.get_rank() == 0:
        torch.save(model.module.state_dict(), "checkpoint.pt")
    dist.barrier()  # only if the other ranks read the file next
```

## Fix safety
No automatic fix: the guard may need a barrier after it, and the right rank test depends on
the script.

## References
- https://pytorch.org/tutorials/intermediate/ddp_tutorial.html#save-and-load-checkpoints
"""
    flag = (
        """import torch
import torch.distributed as dist

def train(model, loader, optimizer, epochs):
    for epoch in range(epochs):
        for x, y in loader:
            optimizer.zero_grad()
            model(x).sum().backward()
            optimizer.step()
        torch.save(model.module.state_dict(), f"ckpt_{epoch}.pt")
""",
        """import torch
import torch.distributed as dist

def save_checkpoint(model, path):
    torch.save({"model": model.module.state_dict()}, path)

def train(model, epochs):
    for epoch in range(epochs):
        save_checkpoint(model, f"epoch{epoch}.pt")
""",
        """import torch
import torch.distributed as dist
import torch.multiprocessing as mp

def worker(rank, world_size):
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    state = {"step": 0}
    torch.save(state, "state.pt")

if __name__ == "__main__":
    mp.spawn(worker, args=(2,), nprocs=2)
""",
    )
    allow = (
        """import torch
import torch.distributed as dist

def train(model, epochs):
    for epoch in range(epochs):
        if dist.get_rank() == 0:
            torch.save(model.module.state_dict(), f"ckpt_{epoch}.pt")
        dist.barrier()
""",
        """import torch
import torch.distributed as dist

def is_main_process():
    return dist.get_rank() == 0

def save_on_master(*args, **kwargs):
    if is_main_process():
        torch.save(*args, **kwargs)

def save_checkpoint(model, path):
    torch.save(model.module.state_dict(), path)

def train(model, epochs, rank):
    for epoch in range(epochs):
        save_on_master(model.module.state_dict(), "last.pt")
        if rank == 0:
            save_checkpoint(model, f"e{epoch}.pt")
""",
        """import torch
import torch.distributed as dist

def save_shard(model, out_dir):
    rank = dist.get_rank()
    torch.save(model.module.state_dict(), f"{out_dir}/shard_rank{rank}.pt")
""",
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        if single_process(ctx):
            return
        project = ctx.project
        reported: set[int] = set()
        for call in ctx.calls:
            if ctx.call_name(call) == SAVE:
                yield from self._check_save(ctx, call, reported)
            elif (
                project is not None
                and project.helper_saves(ctx, call) == "unguarded"
                and self._every_rank_reaches(ctx, call)
                and not _per_rank_arguments(ctx, call)
            ):
                yield Finding(
                    call,
                    f"`{ctx.code(call.func)}()` saves a checkpoint without a rank guard "
                    "and is called here on every rank: all processes write the same file "
                    "(contention, and a possibly corrupt file); call it on rank 0 only",
                )

    def _every_rank_reaches(self, ctx: FileContext, node: cst.CSTNode, depth: int = 3) -> bool:
        """`node` runs on every rank as far as this file shows: no guard on the way up
        through its callers, ending at module level or an entry point (`main`, a function
        passed to `mp.spawn`). A function nobody here calls is someone else's to judge."""
        if _runs_once(ctx, node):
            return False
        func = ctx.enclosing_function(node)
        if func is None:
            return True
        if depth == 0:
            return False
        sites = _outside_calls(ctx, func)
        if not sites:
            return _is_entry(ctx, func)
        return any(self._every_rank_reaches(ctx, s, depth - 1) for s in sites)

    def _check_save(
        self, ctx: FileContext, call: cst.Call, reported: set[int]
    ) -> Iterator[Finding]:
        path = save_path(call)
        if path is None or any(a.star for a in call.args) or not is_checkpoint_save(ctx, call):
            return
        if per_rank_path(ctx, path, call) or _runs_once(ctx, call):
            return
        func = ctx.enclosing_function(call)
        sites = _outside_calls(ctx, func) if func is not None else []
        unguarded = [
            s for s in sites if not _per_rank_arguments(ctx, s) and self._every_rank_reaches(ctx, s)
        ]
        if (
            func is None
            or (not sites and _is_entry(ctx, func))
            or any(isinstance(ctx.scope(site), cst.Module) for site in unguarded)
        ):
            # At module level, in an entry point, or in a function `main` runs: the save.
            yield Finding(
                call,
                "`torch.save` runs on every rank: all processes write the same checkpoint "
                "file (N times the I/O; concurrent writers can leave a corrupt file); save on "
                "rank 0 only (`if dist.get_rank() == 0:`)",
            )
            return
        for site in unguarded:
            if id(site) not in reported:
                reported.add(id(site))
                yield Finding(
                    site,
                    f"`{ctx.code(site.func)}()` saves a checkpoint (`torch.save` in "
                    f"`{func.name.value}`) and is called here on every rank: all processes "
                    "write the same file (contention, and a possibly corrupt file); call it on "
                    "rank 0 only",
                )

"""DDP013: a checkpoint written by every rank."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from ddplint.context import FileContext
from ddplint.diagnostics import Severity
from ddplint.domain import domain_of
from ddplint.domain.checkpoints import SAVE, is_checkpoint_save, save_path
from ddplint.domain.ddp_facts import argument
from ddplint.domain.downloads import in_first_context
from ddplint.domain.overwrites import before_error
from ddplint.domain.paths import own_file
from ddplint.domain.processes import single_process
from ddplint.domain.project_view import project_of
from ddplint.domain.runners import every_rank, is_entry, outside_calls
from ddplint.domain.saved_values import saves_data
from ddplint.domain.saves import chooses_writers
from ddplint.rule import Finding, Rule, register


@register
class CheckpointEveryRank(Rule):
    code = "DDP013"
    name = "checkpoint-every-rank"
    severity = Severity.WARNING
    default = False  # opt-in: first contact (fresh7 + fresh8): 1 true / 14 false / 1 debatable
    summary = "`torch.save` runs on every rank: all processes write the same checkpoint file"
    explanation = """
## What it does
Flags a `torch.save(...)` that every rank runs: no rank-0 guard around it, in its function
or at every call of that function in the file. Also flags the unguarded call of a helper
(of this file or of the project) that saves without a guard of its own.

Left alone: saves under `if rank == 0:` / `if is_main_process():` or after
`if not main: return`, saves inside a function only called under such a guard or
decorated to run on rank 0 only (`@rank_zero_only`, or a project decorator whose wrapper
calls the function under a rank-0 test),
`save_on_master`-style helpers that guard inside, files whose path holds the rank
(intentional per-rank shards) or the items of a loader a DistributedSampler shards (a
file per image of the rank's own share), fresh temporary files
(`tempfile.NamedTemporaryFile()`: each process gets its own), saves into an in-memory
buffer, saves inside `with torch_distributed_zero_first(rank):`-style blocks, branches
that only run without
distribution (`if not args.distributed:`), helpers no code in the file calls (their
callers' files decide), a dataset's per-sample cache (a save while `__getitem__` loads an
item: each rank loads its own samples), and library saves that choose their writers
themselves (accelerate's `save_fsdp_model`, `torch.distributed.checkpoint.save`).
Unproven (`--preview`): a save right before an exception leaves its function (the batch
and weights dumped before `raise RuntimeError("loss is NaN")`): the ranks that meet the
error write it, and which ones do depends on the data.

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
        project = project_of(ctx)
        reported: set[int] = set()
        for call in ctx.calls:
            if ctx.call_name(call) == SAVE:
                yield from self._check_save(ctx, call, reported)
            elif (
                project is not None
                and project.helper_saves(ctx, call) == "unguarded"
                and not chooses_writers(ctx, call)
                and not domain_of(ctx).ranks.rank_in_arguments(call)
            ):
                where = every_rank(ctx, call, in_first_context)
                if where is False:
                    continue
                yield Finding(
                    call,
                    f"`{ctx.code(call.func)}()` saves a checkpoint without a rank guard "
                    "and is called here on every rank: all processes write the same file "
                    "(contention, and a possibly corrupt file); call it on rank 0 only",
                    unproven=where is None,
                )

    def _check_save(
        self, ctx: FileContext, call: cst.Call, reported: set[int]
    ) -> Iterator[Finding]:
        path = save_path(call)
        if path is None or any(a.star for a in call.args) or not is_checkpoint_save(ctx, call):
            return
        if own_file(ctx, path, call):
            return
        where = every_rank(ctx, call, in_first_context)
        if where is False:
            return
        if where is True and before_error(ctx, call):
            where = None  # a dump before an error: the ranks that meet it write
        # A data file (`saves_data`) contends all the same; the message names what it is.
        saved = argument(call, 0, "obj")
        data = saved is not None and saves_data(ctx, saved, call)
        what, file = ("a file", "file") if data else ("a checkpoint", "checkpoint file")
        func = ctx.enclosing_function(call)
        unguarded = _unguarded_callers(ctx, func) if func is not None else []
        if (
            func is None
            or (not outside_calls(ctx, func) and is_entry(ctx, func))
            or any(type(ctx.scope(site)) is cst.Module for site, _ in unguarded)
            or not unguarded
        ):
            # At module level, in an entry point, or in a function `main` runs: the save.
            yield Finding(
                call,
                f"`torch.save` runs on every rank: all processes write the same {file} (N "
                "times the I/O; concurrent writers can leave a corrupt file); save on "
                "rank 0 only (`if dist.get_rank() == 0:`)",
                unproven=where is None or _path_from_callers(ctx, func, path),
            )
            return
        for site, proven in unguarded:
            if id(site) not in reported:
                reported.add(id(site))
                yield Finding(
                    site,
                    f"`{ctx.code(site.func)}()` saves {what} (`torch.save` in "
                    f"`{func.name.value}`) and is called here on every rank: all processes "
                    "write the same file (contention, and a possibly corrupt file); call it on "
                    "rank 0 only",
                    unproven=not proven or where is None,
                )


def _unguarded_callers(ctx: FileContext, func: cst.FunctionDef) -> list[tuple[cst.Call, bool]]:
    """The calls of `func` in this file that may run on every rank, passing no per-rank
    file name, each with whether every rank is proven to reach it."""
    found = []
    for site in outside_calls(ctx, func):
        if domain_of(ctx).ranks.rank_in_arguments(site):
            continue
        where = every_rank(ctx, site, in_first_context)
        if where is not False:
            out_of_sight = _path_from_callers(ctx, ctx.enclosing_function(site), site)
            found.append((site, where is True and not out_of_sight))
    return found


def _path_from_callers(ctx: FileContext, func: cst.FunctionDef | None, path: cst.CSTNode) -> bool:
    """The file name (`path`, or the arguments of a call that saves) comes from a
    parameter of a function no call in this file shows (not an entry point such as
    `main`): its callers may pass a name of each rank's own."""
    if func is None or is_entry(ctx, func) or outside_calls(ctx, func):
        return False
    params = func.params
    names = {p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)}
    return any(name.split(".")[0] in names for name in ctx.names_in(path))

"""DDP041: a seed set in the process that `mp.spawn`s the workers, which never see it."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator

import libcst as cst

from ddplint.context import FileContext
from ddplint.diagnostics import Severity
from ddplint.domain.call_reach import functions_reached
from ddplint.domain.ddp_facts import last_name
from ddplint.domain.project_view import project_of
from ddplint.domain.random_draws import (
    draws_from_process_generators,
    is_seeding_name,
    seeds_torch,
)
from ddplint.domain.spawned_workers import in_main_block, in_starting_process, spawns, worker
from ddplint.rule import Finding, Rule, register

# Seeds of the process's generators: torch's, CUDA's, Python's and NumPy's.
_SEEDS = frozenset(
    {
        "torch.cuda.manual_seed",
        "torch.cuda.manual_seed_all",
        "random.seed",
        "numpy.random.seed",
    }
)
_MAX_HELPERS = 20  # functions of the file followed from a spawned worker
# A keyword that hands a call a seed (`seed=`, `random_seed=`, `seed_value=`).
_SEED_KEYWORD = re.compile(r"(?i)(?:^|_)seed(?:$|_)")


@register
class SeedBeforeSpawn(Rule):
    code = "DDP041"
    name = "seed-before-spawn"
    severity = Severity.WARNING
    summary = "Seed set in the parent before mp.spawn: the spawned workers never see it"
    explanation = """\
## What it does
Flags a seed (`torch.manual_seed`, `random.seed`, `np.random.seed`,
`torch.cuda.manual_seed_all`, a library or project helper that seeds torch, or a seeding
helper of the same file) set in the process that starts the workers with
`torch.multiprocessing.spawn` / `start_processes`: in the function that starts them, before
the start, or in the `if __name__ == "__main__":` block of a file that starts them, when
the spawned worker function (a function of the same file) never seeds itself, and nothing
at module level seeds either. A worker that hands a seed to a call (`ParallelContext(...,
seed=69)`, `make_env(seed=cfg.seed)`) seeds out of sight, and a seed that the starting
function's own draws follow before the start (`torch.manual_seed(0)`, then `x =
torch.randn(4, 8)` handed to the workers: test data made repeatable) is there for the
parent: both are left alone. Where every start of the workers runs only under an option
none of the project's commands passes (`if args.multiprocessing_distributed:
mp.spawn(...)` beside `else: main_worker(...)`, and every command runs one process), the
seed reaches the process that trains on every documented run: unproven (`--preview`).

## Why is this bad?
`mp.spawn` starts every worker in a fresh Python interpreter (the "spawn" start method):
each one imports the script again and runs the worker function, with generators seeded
from the operating system. A seed set in the parent reaches none of them, so the
multi-process run is unseeded: two runs with the same `--seed` differ, while a
one-process path of the same script (the worker function called directly, without
`mp.spawn`) is reproducible.

## Example
```python
def main(args):
    torch.manual_seed(args.seed)
    mp.spawn(worker, nprocs=torch.cuda.device_count(), args=(args,))
```

## Use instead
```python
def worker(rank, args):
    torch.manual_seed(args.seed + rank)  # or args.seed where every rank must agree
    ...

def main(args):
    mp.spawn(worker, nprocs=torch.cuda.device_count(), args=(args,))
```

## Fix safety
No fix is offered: whether the workers need the same seed or one per rank is the
author's choice.

## References
- https://pytorch.org/docs/stable/multiprocessing.html#spawning-subprocesses
- https://docs.python.org/3/library/multiprocessing.html#contexts-and-start-methods
"""
    flag = (
        """\
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

def worker(rank, args):
    dist.init_process_group("nccl", rank=rank, world_size=args.gpus)
    model = build(args).cuda(rank)

def main(args):
    torch.manual_seed(args.seed)
    mp.spawn(worker, nprocs=torch.cuda.device_count(), args=(args,))
""",
        """\
import random
import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)

def train(gpu, args):
    dist.init_process_group("nccl", rank=gpu, world_size=args.gpus)
    run(gpu, args)

if __name__ == "__main__":
    args = parse()
    set_seed(args.seed)
    mp.spawn(train, nprocs=args.gpus, args=(args,))
""",
        """\
import numpy as np
import torch.distributed as dist
import torch.multiprocessing as mp

def worker(rank, cfg):
    dist.init_process_group("nccl", rank=rank, world_size=cfg.gpus)
    fit(rank, cfg)

def launch(cfg):
    np.random.seed(cfg.seed)
    mp.start_processes(worker, args=(cfg,), nprocs=cfg.gpus, start_method="spawn")
""",
    )
    allow = (
        """\
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

def worker(rank, args):
    torch.manual_seed(args.seed + rank)
    model = build(args).cuda(rank)

def main(args):
    torch.manual_seed(args.seed)
    mp.spawn(worker, nprocs=torch.cuda.device_count(), args=(args,))
""",
        """\
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

torch.manual_seed(0)

def worker(rank, args):
    model = build(args).cuda(rank)

def main(args):
    mp.spawn(worker, nprocs=torch.cuda.device_count(), args=(args,))
""",
        """\
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

def seed_all(seed):
    torch.manual_seed(seed)

def worker(rank, args):
    seed_all(args.seed)
    model = build(args).cuda(rank)

def main(args):
    seed_all(args.seed)
    mp.spawn(worker, nprocs=torch.cuda.device_count(), args=(args,))
""",
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        starts = spawns(ctx)
        seeds = _seeds(ctx)
        if not starts or any(
            ctx.enclosing_function(s) is None and not in_main_block(ctx, s) for s in seeds
        ):
            return  # no spawn, or a module-level seed that every worker runs on import
        workers = [worker(ctx, start) for start in starts]
        if any(w is None or _seeds_within(ctx, w) for w in workers):
            return  # a worker out of sight, or one that seeds itself
        places: set[int] = set()
        for seed in seeds:
            place = id(ctx.enclosing_function(seed))  # one finding per function or block
            if _draws_after(ctx, seed, starts):
                continue  # it seeds the parent's own draws (test data handed to workers)
            if place not in places and in_starting_process(ctx, seed, starts):
                places.add(place)
                # no harm where no worker starts (a spawn under an option no command passes)
                yield Finding(seed, _message(ctx, seed), rests_on=tuple(starts))


def _message(ctx: FileContext, seed: cst.Call) -> str:
    return (
        f"`{ctx.code(seed)}` runs in the process that starts the workers with mp.spawn, "
        "which starts each worker in a fresh interpreter: no worker sees this seed, so the "
        "workers run unseeded (two runs with the same seed differ); seed inside the worker "
        "function"
    )


def _seeds(ctx: FileContext) -> list[cst.Call]:
    """The calls of the file that seed a generator, directly or through a seeding helper
    of this file or the project; the helpers' own seed calls are not listed twice."""
    project = project_of(ctx)
    helpers = {
        func
        for call in ctx.calls
        if _seeds_directly(ctx, call)
        for func in [ctx.enclosing_function(call)]
        if func is not None and is_seeding_name(func.name.value)
    }
    found = []
    for call in ctx.calls:
        if _seeds_directly(ctx, call):
            if ctx.enclosing_function(call) in helpers and _called(
                ctx, ctx.enclosing_function(call)
            ):
                continue  # reported where the helper is called
            found.append(call)
        elif any(f in helpers for f in ctx.resolver.callees(call)) or (
            project is not None and project.helper_seeds_alike(ctx, call)
        ):
            found.append(call)
    return found


def _seeds_directly(ctx: FileContext, call: cst.Call) -> bool:
    return seeds_torch(ctx, call) or ctx.call_name(call) in _SEEDS


def _draws_after(ctx: FileContext, seed: cst.Call, starts: list[cst.Call]) -> bool:
    """The function that seeds draws from the seeded generators after the seed and before
    it starts the workers (`torch.manual_seed(0)`, then `x = torch.randn(4, 8)` handed to
    `mp.spawn(run, args=(x,))`): the seed makes the parent's own draws repeatable."""
    func = ctx.enclosing_function(seed)
    if func is None:
        return False
    later = [s for s in starts if ctx.enclosing_function(s) is func and ctx.before(seed, s)]
    return any(
        ctx.before(seed, call)
        and any(ctx.before(call, start) for start in later)
        and draws_from_process_generators(ctx, call)
        for call in ctx.calls_within(func)
    )


def _called(ctx: FileContext, func: cst.FunctionDef | None) -> bool:
    return func is not None and any(func in ctx.resolver.callees(c) for c in ctx.calls)


def _seeds_within(ctx: FileContext, func: cst.FunctionDef) -> bool:
    """The worker seeds a generator itself, or through functions of this file it calls, a
    project helper that seeds torch, or any helper named like a seeding one."""
    project = project_of(ctx)
    followed = itertools.islice(
        itertools.chain((func,), functions_reached(ctx, func)), _MAX_HELPERS
    )
    for reached in followed:
        for call in ctx.calls_within(reached):
            if _seeds_directly(ctx, call):
                return True
            if project is not None and project.helper_seeds_alike(ctx, call):
                return True
            if is_seeding_name(last_name(call.func) or ""):
                return True  # a seeding helper out of sight may seed the worker
            if any(
                a.keyword is not None and _SEED_KEYWORD.search(a.keyword.value) for a in call.args
            ):
                return True  # `ParallelContext(..., seed=69)`: seeded out of sight
    return False

"""DDP034: `CUDA_VISIBLE_DEVICES` pinned to one constant device on every rank."""

from __future__ import annotations

import re
from collections.abc import Iterator

import libcst as cst

from ddplint.context import FileContext
from ddplint.diagnostics import Severity
from ddplint.domain.apis import PROCESS_CLASSES, SPAWN_FUNCTIONS
from ddplint.domain.one_rank_groups import spawns_one_process
from ddplint.domain.rank_evidence import rank_evidence
from ddplint.domain.runners import every_rank
from ddplint.engine.resolve import argument
from ddplint.rule import Finding, Rule, register
from ddplint.rules.ddp034_visible_devices_pinned.pins import Pin, per_process_picks, pins

_USES_CUDA = re.compile(r"\.cuda\(|set_device|[\"']nccl[\"']|[\"']cuda\b")
_ADVICE = "set it per process (`str(local_rank)`) or leave it to the launcher"


@register
class VisibleDevicesPinned(Rule):
    code = "DDP034"
    name = "visible-devices-pinned"
    severity = Severity.ERROR
    summary = "`CUDA_VISIBLE_DEVICES` set to one constant GPU on every rank of a DDP job"
    explanation = """
## What it does
Flags `os.environ["CUDA_VISIBLE_DEVICES"] = "0"` (and `os.environ.setdefault`,
`os.environ.update`, `os.putenv` with one constant device index) that every rank of a
distributed script runs, when the same file picks each process's GPU from a per-process
value (`torch.cuda.set_device(local_rank)`, `.cuda(local_rank)`,
`device_ids=[local_rank]`, the index `mp.spawn` passes). The variable must be set before
the script's first `torch.cuda` call (later it has no effect) and the pick must follow it.
Where the file picks no GPU per process, the finding is shown only under `--preview`,
marked unproven: whether several processes share a node is not in the code.

Left alone: a value per process (`str(local_rank)`, `os.environ["SLURM_LOCALID"]`), a
value from the command line or the environment (`args.gpus`), a list of devices
(`"0,1,2,3"`), a setting under a rank test or in a branch or script that runs as one
process, a pick only in code that never runs (a spawned worker whose one starter nothing
calls: the script's entry calls another function, the spawning call is commented out),
and jobs started by `mp.spawn(nprocs=torch.cuda.device_count())` (after the pin that is
one process) or by `mp.spawn(nprocs=1)` (also with no `nprocs`: its default).

## Why is this bad?
The CUDA driver reads `CUDA_VISIBLE_DEVICES` when a process first touches CUDA and shows
that process only the listed GPUs, renumbered from `cuda:0`. torchrun starts every process
with the same environment and every process runs the same line, so each one sees only GPU
0. On one process nothing changes. With N processes per node, the process of local rank
1 asks for `cuda:1`, which does not exist for it, and stops with "CUDA error: invalid
device ordinal"; where the code uses the default device instead, all N processes share
the one GPU (NCCL stops with "Duplicate GPU detected") while N - 1 GPUs stay idle.

## Example
```python
os.environ["CUDA_VISIBLE_DEVICES"] = "0"
local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
```

## Use instead
```python
local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
```

## Fix safety
No fix is offered: removing the line changes what a single-GPU run of the script sees,
and which GPUs the job should use is the author's choice (`torchrun` with
`CUDA_VISIBLE_DEVICES=0,1` on its command line).

## References
- https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#env-vars
- https://pytorch.org/docs/stable/elastic/run.html
"""
    flag = (
        """
import os
import torch
import torch.distributed as dist

os.environ["CUDA_VISIBLE_DEVICES"] = "0"

def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
""",
        """
import os
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

def worker(gpu, world_size):
    dist.init_process_group("nccl", rank=gpu, world_size=world_size)
    model = torch.nn.Linear(4, 4).cuda(gpu)

if __name__ == "__main__":
    os.environ["CUDA_VISIBLE_DEVICES"] = "3"
    mp.spawn(worker, args=(2,), nprocs=2)
""",
        """
import argparse
import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

DEVICE = "0"

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int)
    args = parser.parse_args()
    os.environ.update(CUDA_VISIBLE_DEVICES=DEVICE)
    dist.init_process_group("nccl")
    model = DDP(torch.nn.Linear(4, 4).cuda(), device_ids=[args.local_rank])
""",
    )
    allow = (
        """
import os
import torch
import torch.distributed as dist

def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    os.environ["CUDA_VISIBLE_DEVICES"] = str(local_rank)
    dist.init_process_group("nccl")
    model = torch.nn.Linear(4, 4).cuda()
""",
        """
import os
import torch
import torch.distributed as dist

os.environ["CUDA_VISIBLE_DEVICES"] = "0,1,2,3"

def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
""",
        """
import os
import torch
import torch.distributed as dist

def main():
    if int(os.environ.get("WORLD_SIZE", "1")) == 1:
        os.environ["CUDA_VISIBLE_DEVICES"] = "0"
        return torch.nn.Linear(4, 4).cuda()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
""",
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        if "CUDA_VISIBLE_DEVICES" not in ctx.source:
            return
        found = list(pins(ctx))
        if not found:
            return
        evidence = rank_evidence(ctx)
        picks = list(per_process_picks(ctx, evidence))
        spawns_visible = _spawns_per_visible_gpu(ctx)
        for pin in found:
            if every_rank(ctx, pin.node) is not True:
                continue
            if _after_cuda_use(ctx, pin.node):
                continue  # the driver has read the variable already: no effect
            after = tuple(p for p in picks if _takes_effect_before(ctx, pin.node, p))
            if spawns_visible:
                continue  # after the pin, `device_count()` processes is one process
            if after:  # the harm needs one of them to run (a worker nothing starts: none)
                yield Finding(pin.node, _proven(ctx, pin, after[0]), rests_on=after)
            elif _USES_CUDA.search(ctx.source):
                yield Finding(pin.node, _possible(pin), unproven=True)


def _proven(ctx: FileContext, pin: Pin, pick: cst.CSTNode) -> str:
    return (
        f'`CUDA_VISIBLE_DEVICES` set to "{pin.device}" on every rank: each process sees '
        f"only GPU {pin.device}, as `cuda:0`, so the per-process device this file picks "
        f'(`{ctx.code(pick)}`) does not exist from local rank 1 on ("CUDA error: invalid '
        f'device ordinal"): the job cannot run more than one process per node; {_ADVICE}'
    )


def _possible(pin: Pin) -> str:
    return (
        f'`CUDA_VISIBLE_DEVICES` set to "{pin.device}" on every rank: each process sees '
        f"only GPU {pin.device}; with several processes per node they all share it (NCCL "
        f'stops with "Duplicate GPU detected") while the other GPUs stay idle; {_ADVICE}'
    )


def _frame(ctx: FileContext, node: cst.CSTNode) -> cst.CSTNode:
    return ctx.scope(node)


def _takes_effect_before(ctx: FileContext, pin: cst.CSTNode, pick: cst.CSTNode) -> bool:
    """The pin runs before the pick: at module level, or earlier in the pick's function."""
    frame = _frame(ctx, pin)
    if type(frame) is cst.Module:
        return True
    return frame is _frame(ctx, pick) and ctx.before(pin, pick)


def _after_cuda_use(ctx: FileContext, pin: cst.CSTNode) -> bool:
    """A `torch.cuda` call runs before the pin, at module level or in its function."""
    frames = {_frame(ctx, pin), ctx.module}
    return any(
        (ctx.call_name(call) or "").startswith("torch.cuda.")
        and ctx.before(call, pin)
        and _frame(ctx, call) in frames
        for call in ctx.calls
    )


def _spawns_per_visible_gpu(ctx: FileContext) -> bool:
    """`mp.spawn(..., nprocs=torch.cuda.device_count())`, directly or through a name
    (`n_gpus = torch.cuda.device_count()`): after the pin, one process; so is
    `mp.spawn(..., nprocs=1)` (or no `nprocs`: its default is 1), and a `Process` started
    in a loop over `range(torch.cuda.device_count())`."""
    if any(_started_per_visible_gpu(ctx, call) for call in ctx.calls_to(*PROCESS_CLASSES)):
        return True
    for call in ctx.calls_to(*SPAWN_FUNCTIONS):
        if "device_count" in ctx.code(call):
            return True
        if spawns_one_process(ctx, call):
            return True
        nprocs = argument(call, 2, "nprocs")  # mp.spawn(fn, args=(), nprocs=1, ...)
        if nprocs is not None and any(
            "device_count" in ctx.code(v.expr) for v in ctx.resolver.values(nprocs, call)
        ):
            return True
    return False


def _started_per_visible_gpu(ctx: FileContext, call: cst.Call) -> bool:
    """`for i in range(n): mp.Process(...)` with `n` from `torch.cuda.device_count()`."""
    loop = ctx.enclosing_loop(call)
    if type(loop) is not cst.For or type(loop.iter) is not cst.Call:
        return False
    bound = loop.iter
    if type(bound.func) is not cst.Name or bound.func.value != "range" or len(bound.args) != 1:
        return False
    return any(
        "device_count" in ctx.code(v.expr) for v in ctx.resolver.values(bound.args[0].value, bound)
    )

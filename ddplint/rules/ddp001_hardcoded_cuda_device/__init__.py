"""DDP001: a hard-coded CUDA device (`"cuda:0"`, `.cuda(0)`, `device_ids=[0]`) in a DDP script."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from ddplint.context import FileContext
from ddplint.diagnostics import Applicability, Severity
from ddplint.domain.apis import DDP_CLASSES, SPAWN_FUNCTIONS
from ddplint.domain.current_device import reads_current_device
from ddplint.domain.ddp_facts import facts_of
from ddplint.domain.device_literals import hardcoded_devices
from ddplint.domain.job_membership import in_job
from ddplint.domain.launch_commands import launched_on_own_gpus
from ddplint.domain.local_rank_names import LocalRankNames
from ddplint.domain.one_gpu_each import sees_one_gpu
from ddplint.domain.one_rank_groups import spawns_one_process
from ddplint.domain.per_process_devices import beside_per_rank_choice, right_for_its_process
from ddplint.domain.process_group import calls_process_group
from ddplint.domain.replaced_defaults import replaced_default
from ddplint.domain.scripts import is_script
from ddplint.domain.unread_names import bound_and_never_read
from ddplint.rule import Finding, FixSpec, Rule, register


def _one_process_per_machine(ctx: FileContext) -> bool:
    """The script starts its job only by spawning one process on each machine (every
    `mp.spawn` of the file starts one: `args.gpus = 1`, then `mp.spawn(main, nprocs=
    args.gpus)`, the rank `args.nr * args.gpus + gpu`) and no launcher hands it a local
    rank: no two processes of a machine share its GPU 0."""
    spawns = list(ctx.calls_to(*SPAWN_FUNCTIONS))
    return (
        bool(spawns)
        and "LOCAL_RANK" not in ctx.source
        and all(spawns_one_process(ctx, call) for call in spawns)
    )


@register
class HardcodedCudaDevice(Rule):
    code = "DDP001"
    name = "hardcoded-cuda-device"
    severity = Severity.ERROR
    summary = "Hard-coded CUDA device index in a DDP script: every process picks the same GPU"
    fixable = Applicability.UNSAFE
    explanation = """
## What it does
Flags a CUDA device index written as a literal in a distributed script: `"cuda:0"` in
`torch.device(...)`, `.to(...)` or a `device=` argument, `.cuda(0)`,
`torch.cuda.set_device(0)`, `torch.device("cuda", 0)`, `torch.load(...,
map_location="cuda:0")` (every process loads the checkpoint onto that GPU), and
`device_ids=[0]` of `DistributedDataParallel` (not `output_device=0`: DDP wraps a module
on the one device of `device_ids` and never reads `output_device` for it; with no
`device_ids` it refuses the argument at construction). Device strings built from the local
rank (`f"cuda:{local_rank}"`, `torch.device("cuda", local_rank)`) are not flagged, nor is
a script that manages `CUDA_VISIBLE_DEVICES` itself, a literal under a rank check, or one
in code that runs in one process only: the single-process side of an `if
args.distributed:` switch (or of `if cfg.distributed_init_method is not None:`), a
function that calls `init_process_group("fake", ...)` (one process simulating a job), a
test that runs in the one test process (a `unittest.TestCase` class or a pytest test that
joins no job or a job of one rank, one skipped under a distributed launch, or a test
method that stands in for one rank: `ShardingEnv.from_local(world_size=2, rank=0)`), a Ray
actor (`@ray.remote(num_gpus=1)`: Ray makes its own GPUs visible from index 0) or a pytest
parametrization a test helper builds for such tests, or a command-line subcommand that
starts no job where another one does (`python main.py benchmark` beside `torchrun main.py
train`). A function called only from such places (`evaluate()` called under `if rank ==
0:`) counts as one of them. A device only compared against (`assert get_device() ==
torch.device("cuda:3")`) is an expected value, not a device any process uses, and a value
moved to a GPU and straight back to the CPU (`w.to(0).to("cpu")`, as bitsandbytes
quantization does) leaves nothing there. Nor is a file whose processes are asserted to see
one GPU each (`assert torch.cuda.device_count() == 1`, in the file or in a setup helper of
the project it calls): index 0 is then each process's own GPU. Where the project's own
launch gives each process one GPU (a wrapper setting `CUDA_VISIBLE_DEVICES` from a
node-local rank, `srun --gpus-per-task=1`), index 0 is each process's own GPU under that
launch: unproven (`--preview`). So is a literal on one side of a test whose other side
picks the device from the process's rank (`f"cuda:{rank}" if mode == "ddp" else
"cuda:0"`): the test tells the job's processes from a run of one, and the literal's side
may be that run. So is `torch.cuda.set_device(0)` in a file that places
nothing on the current device (every tensor and the model moved by an explicit index such
as `.to(local_rank)`, no `.cuda()` or `"cuda"`, a process group on gloo): there it costs
each process a CUDA context on that GPU, and lands on it only what code out of sight puts
on the current device; the message says so. The finding is proven only where a job of
several processes runs the file: it starts a process group, a device mesh or workers, or
wraps a model in DDP, itself or through project code it calls, or a module of the project
that does calls into it (the loss module a trainer imports). A script that starts no job,
and that no such module calls into, runs as a process of its own: unproven there. A script
that starts its job only by spawning one process on each machine (`args.gpus = 1`, then
`mp.spawn(main, nprocs=args.gpus)` with the rank `args.nr * args.gpus + gpu`), which no
launcher hands a local rank, is left alone: no two processes of a machine share its GPU 0.

## Why is this bad?
torchrun starts one process per GPU and every process runs the same code. With a literal
index all processes of a node put their model and tensors on the same GPU: it runs out of
memory, or NCCL refuses with "Duplicate GPU detected", while the other GPUs stay idle.

## Example
```python
local_rank = int(os.environ["LOCAL_RANK"])
model = Net().to("cuda:0")
model = DDP(model, device_ids=[0])
```

## Use instead
```python
local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
model = Net().to(f"cuda:{local_rank}")
model = DDP(model, device_ids=[local_rank])
```

## Fix safety
The fix replaces the literal with the local-rank variable in scope (`"cuda:0"` becomes
`f"cuda:{local_rank}"`, `.cuda(0)` becomes `.cuda(local_rank)`). It is unsafe: the script
may restrict each process to one GPU by other means (a scheduler setting
`CUDA_VISIBLE_DEVICES` per task), in which case index 0 was right. No fix is offered when
no local-rank variable is in scope.

## References
- https://pytorch.org/docs/stable/notes/ddp.html
- https://pytorch.org/tutorials/intermediate/ddp_tutorial.html
- https://pytorch.org/docs/stable/elastic/run.html
"""
    flag = (
        """
import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    model = torch.nn.Linear(10, 10).to("cuda:0")
    model = DDP(model, device_ids=[local_rank])
""",
        """
import os
import torch
import torch.nn as nn
import torch.distributed as dist

dist.init_process_group("nccl")
local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
model = nn.Linear(10, 10).cuda(local_rank)
model = nn.parallel.DistributedDataParallel(model, device_ids=[0])
""",
        """
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as Wrap

def setup():
    dist.init_process_group("nccl")
    device = torch.device("cuda:0")
    model = torch.nn.Linear(4, 4).cuda(0)
    return Wrap(model), device
""",
    )
    allow = (
        """
import os
import torch
import torch.distributed as dist

def setup():
    local_rank = int(os.environ["LOCAL_RANK"]) if "LOCAL_RANK" in os.environ else -1
    if local_rank >= 0:
        torch.cuda.set_device(local_rank)
        dist.init_process_group("nccl")
        return torch.device("cuda", local_rank)
    else:
        return torch.device("cuda:0") if torch.cuda.is_available() else torch.device("cpu")
""",
        """
import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

LOCAL_RANK = int(os.getenv("LOCAL_RANK", -1))

def main(build_model):
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    if LOCAL_RANK != -1:
        torch.cuda.set_device(LOCAL_RANK)
        device = torch.device("cuda", LOCAL_RANK)
        dist.init_process_group("nccl")
    model = build_model().to(device)
    if LOCAL_RANK != -1:
        model = DDP(model, device_ids=[LOCAL_RANK])
""",
        """
import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
dist.init_process_group("nccl")
device = torch.device(f"cuda:{local_rank}")
model = DDP(torch.nn.Linear(4, 4).to(device), device_ids=[local_rank])
""",
        """
import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

local_rank = int(os.environ["LOCAL_RANK"])
dist.init_process_group("nccl")
device = torch.device("cuda", local_rank)
torch.cuda.set_device(device)
model = DDP(torch.nn.Linear(4, 4).cuda(local_rank), device_ids=[local_rank])
""",
        """
import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

# SLURM: one task per GPU, each task sees only its own GPU.
os.environ["CUDA_VISIBLE_DEVICES"] = os.environ["SLURM_LOCALID"]
dist.init_process_group("nccl")
model = DDP(torch.nn.Linear(4, 4).to("cuda:0"), device_ids=[0])
""",
        """
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
names = {"cuda:0": "first GPU"}
print(names["cuda:0"])
x = torch.zeros(3, device="cpu")
""",
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        findings = self._findings(ctx)
        first = next(findings, None)
        if first is None or sees_one_gpu(ctx):
            return  # none; or each process sees one GPU, whose index is 0
        yield first
        yield from findings

    def _findings(self, ctx: FileContext) -> Iterator[Finding]:
        if "CUDA_VISIBLE_DEVICES" in ctx.source:
            return  # the script gives each process its own GPU itself
        if _one_process_per_machine(ctx):
            return  # `mp.spawn(main, nprocs=1)` on each node: GPU 0 is that process's own
        seen: set[int] = set()
        local_rank_names = LocalRankNames(ctx)
        for site in hardcoded_devices(ctx):
            literal = site.literal
            if id(literal) in seen:
                continue
            seen.add(id(literal))
            if _unread_device_value(ctx, literal):
                continue  # `DEVICE = torch.device("cuda:0")` that nothing reads places nothing
            if site.loads and not _joins_job_itself(ctx):
                continue  # a loading helper's file: whether its loads run in the job is not known
            right = right_for_its_process(ctx, literal)
            if right:
                continue
            beside = beside_per_rank_choice(ctx, literal)
            if beside:
                right = None  # which side of the test runs in the job is not in sight
            fix = None
            rank_var = local_rank_names.at(literal)
            if rank_var is not None:
                if type(literal) is cst.SimpleString:
                    quote = literal.quote
                    text = f"f{quote}cuda:{{{rank_var}}}{quote}"
                else:
                    text = rank_var
                fix = FixSpec(
                    f"Use the local rank `{rank_var}`",
                    replacements=((literal, text),),
                    applicability=Applicability.UNSAFE,
                )
            current_only = _sets_current_device_only(ctx, literal)
            if current_only:
                message = (
                    f"Hard-coded CUDA device {site.shown}: it makes GPU {ctx.code(literal)} "
                    "the current device of every process of a node; this file places "
                    "everything by an explicit index, but each process opens a CUDA context "
                    "on that GPU, and anything code out of sight puts on the current device "
                    '(`.cuda()`, `"cuda"`) lands there; use the local rank'
                )
            elif site.loads:
                message = (
                    f"Hard-coded CUDA device {site.shown} as `map_location`: every process "
                    "of a node loads the checkpoint's tensors onto that one GPU, N copies "
                    '(out of memory there); load to `"cpu"` or to the local rank\'s device'
                )
            else:
                message = (
                    f"Hard-coded CUDA device {site.shown}: every process of a node uses the "
                    'same GPU (out of memory, or NCCL "Duplicate GPU detected"); '
                    "use the local rank"
                )
            replaced = replaced_default(ctx, literal)
            if replaced is not None:
                message += (
                    f" (unproven: a default of `{replaced}`, which every call in the project "
                    "passes; only a call out of sight gets it)"
                )
            if beside:
                message += (
                    " (unproven: the other side of this test picks the device from the "
                    "process's rank, so this side may run only outside the job, in one process)"
                )
            alone = replaced is None and _tasks_without_group(ctx)
            if alone:
                message += (
                    " (unproven: this script reads its process index from the launcher's "
                    "environment but joins no process group: its processes may each have "
                    "a GPU of their own, or share one by design)"
                )
            elif replaced is None and not in_job(ctx):
                alone = True
                message += (
                    " (unproven: nothing in sight starts a job of several processes that "
                    "runs this file, here or in a module calling into it: its processes may "
                    "each have a GPU of their own, or share one by design)"
                )
            yield Finding(
                literal,
                message,
                fix=fix,
                # the project's launch gives each process its GPU: right under that launch
                unproven=right is None
                or replaced is not None
                or alone
                or current_only
                or launched_on_own_gpus(ctx.path),
            )


def _tasks_without_group(ctx: FileContext) -> bool:
    """The file is a script whose only tie to a job is reading its process index from the
    environment (`SLURM_PROCID` as a seed in each task of a job array): it calls no
    process-group API and wraps no model in DDP, whatever its helpers do."""
    facts = facts_of(ctx)
    return (
        is_script(ctx.module)
        and not calls_process_group(ctx)
        and not facts.ddp_wraps
        and not facts.helper_wraps
    )


def _sets_current_device_only(ctx: FileContext, literal: cst.CSTNode) -> bool:
    """`literal` is the index of `torch.cuda.set_device(...)` in a file that places
    nothing on the current device (`current_device.reads_current_device`): what it
    costs there is a CUDA context per process on that GPU."""
    arg = ctx.parent(literal)
    call = ctx.parent(arg) if arg is not None else None
    return (
        type(call) is cst.Call
        and ctx.call_name(call) == "torch.cuda.set_device"
        and not reads_current_device(ctx)
    )


def _unread_device_value(ctx: FileContext, literal: cst.CSTNode) -> bool:
    """The literal builds a `torch.device` (a value, no placement) bound to a name that
    nothing reads (`unread_names`); a `.cuda(0)` places its tensor whatever is read."""
    call = next((a for a in ctx.ancestors(literal) if type(a) is cst.Call), None)
    return (
        call is not None
        and ctx.call_name(call) == "torch.device"
        and bound_and_never_read(ctx, literal)
    )


def _joins_job_itself(ctx: FileContext) -> bool:
    """The file wraps a model in DDP or uses the process group itself: its loads run in
    the processes of a job (a checkpoint loader of an inference class may run alone)."""
    return calls_process_group(ctx) or any(True for _ in ctx.calls_to(*DDP_CLASSES))

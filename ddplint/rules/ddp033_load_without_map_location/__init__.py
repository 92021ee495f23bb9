"""DDP033: `torch.load` without `map_location` on every rank of a CUDA job."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator

import libcst as cst

from ddplint.context import FileContext
from ddplint.diagnostics import Severity
from ddplint.domain import domain_of
from ddplint.domain.ddp_facts import string_value
from ddplint.domain.downloads import one_rank_first
from ddplint.domain.launch_commands import launched_on_own_gpus
from ddplint.domain.one_gpu_each import sees_one_gpu
from ddplint.domain.processes import single_process
from ddplint.domain.project_view import project_of
from ddplint.domain.runners import every_rank
from ddplint.domain.saved_values import restores_tensorless_state
from ddplint.domain.state_loads import feeds_state
from ddplint.domain.written_files import HelperLoad
from ddplint.engine.resolve import argument, argument_for
from ddplint.rule import Finding, Rule, register
from ddplint.rules.ddp033_load_without_map_location.provenance import (
    gathered_to_cpu_in_imports,
    helper_saves_off_gpu,
    same_format_saves,
    saves_of,
    written_elsewhere,
)
from ddplint.rules.ddp033_load_without_map_location.spawn_index import only_without_index

_LOAD = "torch.load"
# The file trains on CUDA: tensors it saves carry a `cuda:<index>` location tag.
_USES_CUDA = re.compile(r"\.cuda\(|set_device|[\"']nccl[\"']|[\"']cuda\b")
_VISIBLE = "CUDA_VISIBLE_DEVICES"
_TEST_MODULE = re.compile(r"test_\w*\.py$|\w+_test\.py$")  # pytest's file names
_HARM = (
    "torch restores each tensor onto the GPU it was saved from (cuda:0 for a file rank 0 "
    "wrote), whatever `set_device` says, so every process puts a copy on that one GPU "
    "and opens a CUDA context there (out of memory with a large model); pass "
    '`map_location="cpu"` or this process\'s device'
)


@register
class LoadWithoutMapLocation(Rule):
    code = "DDP033"
    name = "load-without-map-location"
    severity = Severity.WARNING
    # default again: opt-in from fresh141 (20 / 8 / 17 over fresh103 to fresh141), its
    # findings at first contact since read 6 / 0 / 0 (fresh152 to fresh163, the --select=ALL
    # runs; bench/realworld/first_contact.py)
    summary = "`torch.load` without `map_location` on every rank: all ranks load onto one GPU"
    explanation = """
## What it does
Flags a `torch.load(...)` without `map_location` (or with `map_location=None`) that every
rank of a distributed CUDA job runs, when the file it reads is one the same script writes
with `torch.save` from a model's or optimizer's `state_dict()` (the same path expression,
or the same file name: `latest.pth`, `ckpt_*.pt`), or a checkpoint in the format the
project writes so: a dict holding every key, two at least, read from the loaded result
(`ckpt["model"]`, `ckpt["optimizer"]`: a resume of its own checkpoint from `--resume`),
built in a `torch.save` of this file, in the dict this file hands to a saving helper
(`save_checkpoint({"epoch": e, "state_dict": ...}, path)`), or in a `torch.save` of any
project module this file imports, directly or not (`engine/checkpointing.py`); not for a
path that names by a literal a file another saving script of the project names (`f"{out}/
ckpt/warm_start"` written by `prepare.py`): that script wrote it, in its own way. A load
whose file comes from elsewhere (a downloaded pretrained file) and whose result goes to
`load_state_dict` is shown only under `--preview`, marked unproven: whether that file
holds CUDA tensors is not in the code. So is a load in a file that gathers a sharded
model's state onto the CPU (`FullStateDictConfig(offload_to_cpu=True)`, fairscale's
`state_dict_device=torch.device("cpu")`), or that imports a project module doing so (the
helper that wraps the model). A helper of
another project module that loads the file its caller names (`utils.load_checkpoint(path,
model)`, `read_pkl(path, map_location=None)`) is judged at the call the same way, from the
caller's file. A file trains on CUDA when it names CUDA, or when it calls a project
helper that sets the process's GPU (`default_setup(args)`).

Left alone: any `map_location` (`"cpu"`, a device, a variable, a lambda, a dict), loads
under a rank-0 guard, in a branch or script that runs as one process, in a function no
code of the file calls, per-rank files (a path built from the rank), saves that move the
state to the CPU first (`.cpu()`, also a dict entry computed so, or the state of a model
rebound to the CPU just before, `model = model.to("cpu")`), CPU-only jobs, test
modules (`test_*.py`: their scratch checkpoints are not a job's resume), and files whose
code names `CUDA_VISIBLE_DEVICES` other than to show every process the same list of
several GPUs (`os.environ["CUDA_VISIBLE_DEVICES"] = "0,1,2,3"`; a comment or a docstring
names nothing): each process may see only its own GPU, which is then `cuda:0` in every
process, or every process only one GPU, which they share anyway; so are files whose
processes are asserted to see one GPU each (`assert torch.cuda.device_count() == 1`, in
the file or in a setup helper of the project it calls), and the files of a project whose
own launch gives each process one GPU (a wrapper setting `CUDA_VISIBLE_DEVICES` from a
node-local rank, `srun --gpus-per-task=1`). So is a load handed whole to the
`load_state_dict` of a `GradScaler` or a learning-rate scheduler
(`scaler.load_state_dict(torch.load(path))`): their state is Python numbers, no tensor
lands on a GPU (an object made out of sight is judged by its name: `scaler`,
`scheduler`). So is a load in a spawned worker under a test that its index is None (`if
args.gpu is None:` after `args.gpu = gpu`): `mp.spawn` passes an int, so only the
process the script runs itself, without spawning, takes that branch.

## Why is this bad?
`torch.save` records, for each tensor, the device it lived on (`cuda:0` for the state of
a model on rank 0's GPU). `torch.load` deserializes every tensor on the CPU and then
moves it back to that recorded device; `torch.cuda.set_device(local_rank)` does not
change this. With one process the checkpoint lands on the GPU the model uses. With N
processes per node, all N load their copy onto GPU 0 at the same moment: GPU 0 holds N
copies of the checkpoint (8 copies of a 10 GB checkpoint is 80 GB) plus a CUDA context
for each other process (several hundred MB each, for the whole run), and runs out of
memory while the other GPUs stay idle.

## Example
```python
torch.cuda.set_device(local_rank)
if dist.get_rank() == 0:
    torch.save({"model": model.module.state_dict()}, "last.pt")
...
state = torch.load("last.pt")
model.module.load_state_dict(state["model"])
```

## Use instead
```python
state = torch.load("last.pt", map_location="cpu")
model.module.load_state_dict(state["model"])
```

## Fix safety
No fix is offered: code that uses the loaded tensors directly (an EMA copy, an optimizer
state read by hand) may need them on this process's GPU, which `map_location=device`
gives and `"cpu"` does not; the choice is the author's.

## References
- https://pytorch.org/docs/stable/generated/torch.load.html
- https://pytorch.org/tutorials/intermediate/ddp_tutorial.html#save-and-load-checkpoints
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
    torch.cuda.set_device(local_rank)
    model = DDP(torch.nn.Linear(8, 8).cuda(), device_ids=[local_rank])
    if os.path.exists("latest.pth"):
        model.module.load_state_dict(torch.load("latest.pth"))
    if dist.get_rank() == 0:
        torch.save(model.module.state_dict(), "latest.pth")
""",
        """
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP

def worker(gpu, world_size, resume):
    dist.init_process_group("nccl", rank=gpu, world_size=world_size)
    torch.cuda.set_device(gpu)
    model = DDP(torch.nn.Linear(8, 8).cuda(gpu), device_ids=[gpu])
    optimizer = torch.optim.Adam(model.parameters())
    if resume:
        state = torch.load(f"ckpt/step_{resume}.pt", map_location=None)
        optimizer.load_state_dict(state["optim"])
    if gpu == 0:
        torch.save({"optim": optimizer.state_dict()}, f"ckpt/step_{100}.pt")

if __name__ == "__main__":
    mp.spawn(worker, args=(4, 0), nprocs=4)
""",
        """
import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def main(args):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = torch.nn.Linear(8, 8).cuda()
    model.load_state_dict(torch.load(os.path.join(args.out, "model_best.pth")))
    model = DDP(model, device_ids=[local_rank])
    if dist.get_rank() == 0:
        torch.save(model.module.state_dict(), os.path.join(args.out, "model_best.pth"))
""",
    )
    allow = (
        """
import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(torch.nn.Linear(8, 8).cuda(), device_ids=[local_rank])
    if os.path.exists("latest.pth"):
        state = torch.load("latest.pth", map_location=lambda storage, loc: storage)
        model.module.load_state_dict(state)
    if dist.get_rank() == 0:
        torch.save(model.module.state_dict(), "latest.pth")
""",
        """
import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(torch.nn.Linear(8, 8).cuda(), device_ids=[local_rank])
    if dist.get_rank() == 0:
        torch.save(model.module.state_dict(), "best.pth")
        model.module.load_state_dict(torch.load("best.pth"))
""",
        """
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def main():
    dist.init_process_group("gloo")
    model = DDP(torch.nn.Linear(8, 8))
    model.module.load_state_dict(torch.load("cpu_run.pth"))
    if dist.get_rank() == 0:
        torch.save(model.module.state_dict(), "cpu_run.pth")
""",
        """
import torch

def main():
    model = torch.nn.Linear(8, 8).cuda()
    model.load_state_dict(torch.load("single.pth"))
    torch.save(model.state_dict(), "single.pth")

if __name__ == "__main__":
    main()
""",
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        findings = self._findings(ctx)
        first = next(findings, None)
        if first is None or launched_on_own_gpus(ctx.path) or sees_one_gpu(ctx):
            return  # none; or the project's launch or its code gives each process one GPU
        yield first
        yield from findings

    def _findings(self, ctx: FileContext) -> Iterator[Finding]:
        if _isolates_devices(ctx) or not _uses_cuda(ctx):
            return
        if _TEST_MODULE.match(os.path.basename(ctx.path)):
            return  # a test, whose scratch checkpoints nobody resumes from
        for finding in self._candidates(ctx):
            if single_process(ctx):  # asked once a load is found: it may ask other modules
                return
            yield finding

    @staticmethod
    def _candidates(ctx: FileContext) -> Iterator[Finding]:
        """The loads without `map_location` the file makes, itself or through a project
        helper; whether it runs in one process is asked at the first (`_findings`)."""
        for call in ctx.calls_to(_LOAD):
            path = argument(call, 0, "f")
            if path is None or not _no_map_location(call):
                continue
            if restores_tensorless_state(ctx, call):
                continue  # a GradScaler's or scheduler's state: numbers, no tensor
            finding = _judged(ctx, call, path, "`torch.load`")
            if finding is not None:
                yield finding
        project = project_of(ctx)
        if project is None:
            return
        for call in ctx.calls:
            if not call.args or any(a.star for a in call.args) or ctx.call_name(call) == _LOAD:
                continue
            for load in project.helper_loads(ctx, call):
                finding = _through_helper(ctx, call, load)
                if finding is not None:
                    yield finding
                    break


def _isolates_devices(ctx: FileContext) -> bool:
    """The file may give each process its own `CUDA_VISIBLE_DEVICES` (its own GPU is then
    `cuda:0` in every process), or show every process one GPU only (all of them on it,
    whatever the load does): its code names the variable other than in assignments of
    several GPUs or none alike on every rank (`_several_gpus_or_none`); a comment or a
    docstring names nothing."""
    if _VISIBLE not in ctx.source:
        return False
    mentions = sum(  # in the code's strings: a comment or a docstring isolates nothing
        _VISIBLE in (node.value if isinstance(node, cst.FormattedStringText) else node.raw_value)
        for node in ctx.nodes_of(cst.SimpleString, cst.FormattedStringText)
        if isinstance(node, (cst.SimpleString, cst.FormattedStringText))
        and type(ctx.parent(node)) is not cst.Expr
    )
    if not mentions:
        return False
    several = 0
    for node in ctx.nodes_of(cst.Assign):
        assert type(node) is cst.Assign
        target = node.targets[0].target if len(node.targets) == 1 else None
        if (
            type(target) is cst.Subscript
            and ctx.qualname(target.value) == "os.environ"
            and len(target.slice) == 1
            and type(key := target.slice[0].slice) is cst.Index
            and type(key.value) is cst.SimpleString
            and key.value.raw_value == _VISIBLE
            and _several_gpus_or_none(ctx, node.value, node)
        ):
            several += 1
    return several < mentions


def _several_gpus_or_none(ctx: FileContext, value: cst.BaseExpression, at: cst.CSTNode) -> bool:
    """`value` shows every process the same GPUs, more than one (`"0,1,2,3"`,
    `",".join(str(g) for g in args.gpus)`), or none (`"-1"`, a CPU run); not one GPU
    (`"7"`, or a join over a one-item list), not a value that may differ by rank."""
    values = ctx.resolver.values(value, at)
    for found in values:
        text = string_value(found.expr)
        if text is not None:
            if "," not in text and text.strip() not in ("", "-1"):
                return False  # one GPU: every process shares it, whatever the load does
            continue
        joined = _joined(found.expr)
        if joined is None or _one_item(ctx, joined, found.at):
            return False
    return bool(values)


def _joined(expr: cst.BaseExpression) -> cst.BaseExpression | None:
    """`items` for `",".join(items)`."""
    if (
        type(expr) is cst.Call
        and type(expr.func) is cst.Attribute
        and expr.func.attr.value == "join"
        and string_value(expr.func.value) == ","
        and len(expr.args) == 1
    ):
        return expr.args[0].value
    return None


def _one_item(ctx: FileContext, items: cst.BaseExpression, at: cst.CSTNode) -> bool:
    """`items` (or what a comprehension over it iterates) is a literal list of one item."""
    if isinstance(items, (cst.GeneratorExp, cst.ListComp)):
        items = items.for_in.iter
    return any(
        isinstance(v.expr, (cst.List, cst.Tuple)) and len(v.expr.elements) == 1
        for v in ctx.resolver.values(items, at)
    )


def _uses_cuda(ctx: FileContext) -> bool:
    """The file trains on CUDA: it names CUDA itself, or it calls a helper of another
    project module that sets the process's GPU (`default_setup(args)` calling
    `torch.cuda.set_device`), asked only of a file that loads with `torch.load`."""
    if _USES_CUDA.search(ctx.source):
        return True
    project = project_of(ctx)
    if project is None or not ctx.calls_to(_LOAD):
        return False
    return any(project.helper_sets_device(ctx, call) for call in ctx.calls)


def _through_helper(ctx: FileContext, call: cst.Call, load: HelperLoad) -> Finding | None:
    """`call` runs a helper of another module whose `torch.load` reads the file the call
    names with no `map_location` (or with the one the call leaves at None)."""
    if load.texts:
        return None  # a file the helper names itself: its own module judges the load
    if load.map_param is not None:
        where = argument_for(call, load.map_param)
        if where is not None and not (type(where) is cst.Name and where.value == "None"):
            return None
    path = argument_for(call, load.path_param)
    if path is None:
        return None
    callee = ctx.code(call.func).strip()
    feeds = load.feeds_state or feeds_state(ctx, call)  # restored there, or by the caller
    return _judged(ctx, call, path, f"`{callee}(...)` runs `torch.load`", feeds)


def _judged(
    ctx: FileContext,
    call: cst.Call,
    path: cst.BaseExpression,
    what: str,
    feeds: bool | None = None,
) -> Finding | None:
    """A finding for a load of `path` at `call` (`what` it is, for the message) without
    `map_location`: proven when this file writes the file from CUDA state, unproven when
    only the loaded state goes to `load_state_dict` (`feeds`; None: ask the load)."""
    if domain_of(ctx).ranks.rank_in_text(path, call):
        return None  # a per-rank file, saved from this rank's own GPU
    if only_without_index(ctx, call):
        return None  # `if args.gpu is None:`: no spawned worker, the script's one process
    runs_everywhere = every_rank(ctx, call, one_rank_first)
    if runs_everywhere is False:
        return None
    project = project_of(ctx)
    saves = saves_of(ctx, call, path)
    if not saves and not written_elsewhere(ctx, path, call):
        # a file of the format this script writes: not one another script names
        saves = same_format_saves(ctx, call, project)
    if any(s.state_on_gpu is False for s in saves):
        return None  # the script moves the state to the CPU before saving it
    if project is not None and helper_saves_off_gpu(ctx, call, path, project):
        return None  # the same, through a saving helper of another module
    on_gpu = [s for s in saves if s.state_on_gpu]
    if on_gpu and project is not None and gathered_to_cpu_in_imports(ctx, project):
        on_gpu = []  # a sharded model's state, which an imported helper gathers onto the CPU
    if on_gpu:
        # every save that may write the file, when several do (`torch.save(model.module
        # .state_dict(), ...)` under DDP, `torch.save(model.state_dict(), ...)` without)
        writers = " or ".join(dict.fromkeys(s.shown for s in on_gpu))
        return Finding(
            call,
            f"{what} without `map_location` on every rank, of {on_gpu[0].written} with "
            f"{writers} from CUDA tensors: {_HARM}",
            unproven=runs_everywhere is None,  # callers out of sight may run it on one rank
        )
    if feeds if feeds is not None else feeds_state(ctx, call):
        return Finding(
            call,
            f"{what} without `map_location` on every rank: if the file holds CUDA tensors, {_HARM}",
            unproven=True,
        )
    return None


def _no_map_location(call: cst.Call) -> bool:
    """`call` passes no `map_location` (or passes None), and no `**kwargs` that may."""
    if any(arg.star == "**" for arg in call.args):
        return False
    where = argument(call, 1, "map_location")
    return where is None or (type(where) is cst.Name and where.value == "None")

"""DDP020: `.cuda()` / `torch.device("cuda")` in a DDP script that never picks the GPU."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import libcst as cst

from ddplint.context import FileContext
from ddplint.diagnostics import Applicability, Severity
from ddplint.domain.caller_devices import device_of_callers
from ddplint.domain.ddp_facts import argument, keyword, string_value
from ddplint.domain.launch_commands import launched_on_own_gpus
from ddplint.domain.local_rank_names import LocalRankNames
from ddplint.domain.one_gpu_each import sees_one_gpu, under_one_gpu
from ddplint.domain.per_process_devices import default_device_is_own
from ddplint.domain.project_view import project_of
from ddplint.domain.receivers import (
    exclusive_branch,
    is_module,
    made_by_project_class,
    never_bound,
)
from ddplint.domain.runners import Runner, outside_calls, runners
from ddplint.domain.test_modules import is_test_module
from ddplint.rule import Finding, FixSpec, Rule, register
from ddplint.rules.ddp020_cuda_without_set_device.device_picks import (
    INIT,
    default_device_uses,
    device_picks,
    per_call_only,
    unpicked_init,
    unset_branch,
    wrapped_with_device_ids,
)

_IS_INITIALIZED = "torch.distributed.is_initialized"


def _fix(ctx: FileContext) -> FixSpec | None:
    if ctx.imports.bindings.get("torch") != "torch":
        return None
    inits = list(ctx.calls_to(INIT))
    if len(inits) != 1:
        return None
    init = inits[0]
    local_rank = LocalRankNames(ctx).at(init)
    line = ctx.parent(ctx.statement(init))
    if local_rank is None or type(line) is not cst.SimpleStatementLine:
        return None
    if not isinstance(ctx.parent(line), (cst.IndentedBlock, cst.Module)):
        return None
    return FixSpec(
        f"Call `torch.cuda.set_device({local_rank})` before `init_process_group`",
        insertions=((line, f"torch.cuda.set_device({local_rank})"),),
        applicability=Applicability.UNSAFE,
    )


def _gloo_only(ctx: FileContext) -> bool:
    """Every process group of the file is on gloo (an RPC or CPU-collective script):
    NCCL's one-GPU-per-rank check never runs."""
    return all(string_value(argument(init, 0, "backend")) == "gloo" for init in ctx.calls_to(INIT))


@register
class CudaWithoutSetDevice(Rule):
    code = "DDP020"
    name = "cuda-without-set-device"
    severity = Severity.ERROR
    # opt-in: first contact, default runs of fresh28, fresh30, fresh32, fresh35, fresh39 and
    # fresh40: 0 true / 83 false / 6 debatable, nearly all where the launch gave each process
    # its own GPU out of sight: whether processes share a machine's GPUs is rarely in the code.
    default = False
    summary = '`.cuda()` / `torch.device("cuda")` in a DDP script that never sets the device'
    explanation = """
## What it does
In a file that initialises the process group (`init_process_group`) but never chooses a
GPU per process — no `torch.cuda.set_device(...)` (nor `set_device` on a device module:
`torch.get_device_module()`, `getattr(torch, kind)`, a helper returning one), no call of
project code that sets it (a helper, a class whose construction does, a class entered by
`with` whose `__enter__` does), no device index from a variable
(`.cuda(local_rank)`, `torch.device("cuda", local_rank)`, `device_ids=[local_rank]`), no
`CUDA_VISIBLE_DEVICES`, and no local rank handed to a helper of another module that could
set it — flags `.cuda()` without an index, `torch.device("cuda")`, `.to("cuda")`,
`device="cuda"`, and a `device = "cuda"` variable used with `.to(device)`. Code that
runs in one process only is left alone: on the single-process side of an
`if args.distributed:` switch, in a `unittest.TestCase` class that starts no process group
(or one of one rank: `WORLD_SIZE` set to 1) and reads no rank, in a pytest test skipped
under a distributed launch (`skipif("WORLD_SIZE" in os.environ)`) or with no sign of one
in its name, markers, fixtures or body, or in a Ray actor given GPUs of its own
(`@ray.remote(num_gpus=1)`), under `if torch.cuda.device_count() == 1:` (the process sees
one GPU: nothing idles) or in a file whose processes are asserted to see one GPU each
(`assert torch.cuda.device_count() == 1`, in the file or in a setup helper of the project
it calls), in a function or `__main__` block whose every process-group
start is given `world_size=1` (a one-process demo), also in a function only such code
calls, here or in another module (`ddplint.domain.runners`). Fake tensors (under
`FakeTensorMode`) take no GPU memory. Where the project's own launch gives each process one
GPU (a wrapper or job script setting `CUDA_VISIBLE_DEVICES` from a node-local rank,
`srun --gpus-per-task=1`, or a Python launcher of the project importing this module that
sets `CUDA_VISIBLE_DEVICES` to a computed value before it starts each worker process), the
default device is each process's own under that launch: the finding is unproven
(`--preview`). So is a file whose every start of the process group is a
fallback (`if not dist.is_initialized(): dist.init_process_group(...)`: the group is
normally started out of sight, by code that may have chosen the GPU), and module-level code
of a pytest test module (`DEVICE = torch.device("cuda")`, which its single-process tests
use too). A helper the file never runs itself, called from
other project modules one of which sets the device (a `comm.py` beside a launcher that
calls `torch.cuda.set_device`), runs on the device its callers chose.

A `.cuda()` that cannot place anything is left alone: on an object of a class of this file
that is no `nn.Module` and has no `.cuda()` (it raises AttributeError), or on a name bound
only in the other branch of an `if` (UnboundLocalError). On an object of a class of another
project module, whether it is an `nn.Module` is out of sight: unproven (`--preview`). So is
a use in a helper whose callers are all out of sight (nothing in the project calls it, or
only a notebook might: they may have set the device), and a use on the side of
`if dist.is_initialized():` where the group was started before this code ran, by code
that may have chosen the GPU.
Where the file names a device only for single calls (`device_ids=[gpu_id]`, `.cuda(rank)`
for the batches) and never sets the process's device, a model moved with `.cuda()` and
then wrapped in `DDP(model, device_ids=[...])` is flagged too: the index given to DDP does
not move the model, which sits on GPU 0 in every process.

## Why is this bad?
`"cuda"` without an index means the *current* device, which is GPU 0 until
`torch.cuda.set_device` changes it. With one process per GPU and no `set_device`, every
rank puts its model and batches on GPU 0: the other GPUs stay idle, GPU 0 runs out of
memory, and NCCL may fail because several ranks use the same GPU. On gloo (RPC demos,
CPU collectives) there is no NCCL error, but the ranks still share GPU 0; the message
then says only that.

## Example
```python
dist.init_process_group("nccl")
model = DDP(Net().cuda())
```

## Use instead
```python
local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
dist.init_process_group("nccl")
model = DDP(Net().cuda(), device_ids=[local_rank])  # .cuda() now means cuda:local_rank
```

## Fix safety
When the function calling `init_process_group` already holds a local-rank variable, the fix
inserts `torch.cuda.set_device(local_rank)` before that call. It is unsafe: it assumes
one process per GPU on the node and that the variable is the local rank of this process.

## References
- https://pytorch.org/docs/stable/generated/torch.cuda.set_device.html
- https://pytorch.org/docs/stable/notes/cuda.html
- https://pytorch.org/tutorials/intermediate/ddp_tutorial.html
"""
    fixable = Applicability.UNSAFE
    flag = (
        """import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

local_rank = int(os.environ["LOCAL_RANK"])
dist.init_process_group("nccl")
model = DDP(torch.nn.Linear(4, 4).cuda())
""",
        """import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def main():
    dist.init_process_group(backend="nccl")
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = DDP(torch.nn.Linear(4, 4).to(device))
""",
        """import torch
import torch.distributed as dist

dist.init_process_group("nccl")
device = "cuda"
model = torch.nn.Linear(4, 4).to(device)
loss_sum = torch.zeros(1, device="cuda")
dist.all_reduce(loss_sum)
""",
    )
    allow = (
        """import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
dist.init_process_group("nccl")
model = DDP(torch.nn.Linear(4, 4).cuda(), device_ids=[local_rank])
""",
        """import argparse
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

parser = argparse.ArgumentParser()
parser.add_argument("--local-rank", type=int, default=0)
args = parser.parse_args()
dist.init_process_group("nccl")
model = DDP(torch.nn.Linear(4, 4).cuda(args.local_rank), device_ids=[args.local_rank])
""",
        """import torch
import torch.distributed as dist

def evaluate(model, loader):
    correct = torch.zeros(1).cuda()
    for x, y in loader:
        correct += (model(x.cuda()).argmax(1) == y.cuda()).sum()
    dist.all_reduce(correct)
    return correct.item()
""",
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        one_gpu: bool | None = None  # asked at the first finding
        for finding in self._check(ctx):
            if one_gpu is None:
                one_gpu = sees_one_gpu(ctx)
            if one_gpu:
                return  # each process sees one GPU: the default device is its own
            found = runners(ctx, finding.node)
            if found == {Runner.ONE_PROCESS}:
                continue  # the job is not distributed there: GPU 0 is the right GPU
            # no path known to run it in several processes (its callers out of sight)
            guessed = not found & {Runner.EVERY_RANK, Runner.ONE_RANK}
            if not finding.unproven and (
                guessed
                or launched_on_own_gpus(ctx.path)
                or _launched_per_gpu_elsewhere(ctx)
                or _receiver_out_of_sight(ctx, finding.node)
                or _test_module_constant(ctx, finding.node)
            ):
                finding = dataclasses.replace(finding, unproven=True)
            yield finding

    def _check(self, ctx: FileContext) -> Iterator[Finding]:
        if not any(True for _ in ctx.calls_to(INIT)):
            return
        uses = [
            use
            for use in default_device_uses(ctx)
            if not default_device_is_own(ctx, use)
            and not device_of_callers(ctx, use)
            and not _never_runs(ctx, use)
            and not under_one_gpu(ctx, use)
        ]
        if not uses:
            return
        picks = list(device_picks(ctx))
        if picks and per_call_only(ctx, picks):
            yield from _wrapped_on_default_device(ctx, uses)
        if picks:
            yield from self._unpicked_branch(ctx, uses, picks)
            return
        fix = _fix(ctx)
        harm = (
            "GPU 0 holds every rank's memory; the other GPUs idle"
            if _gloo_only(ctx)
            else "GPU 0 out of memory, or NCCL's duplicate-GPU error; the other GPUs idle"
        )
        fallback = all(_fallback_start(ctx, init) for init in ctx.calls_to(INIT))
        for node in uses:
            yield Finding(
                node,
                "the default CUDA device is used but this file never calls "
                f"torch.cuda.set_device(local_rank): every rank lands on GPU 0 ({harm})",
                fix=fix,
                unproven=fallback or _runs_in_a_callback(ctx, node),
            )

    @staticmethod
    def _unpicked_branch(
        ctx: FileContext, uses: list[cst.CSTNode], picks: list[cst.CSTNode]
    ) -> Iterator[Finding]:
        """The uses that can run after an `init_process_group` on a branch that picks no
        GPU, where another branch picks one; and uses on a distributed branch whose sibling
        branch sets the device while theirs never does."""
        found = unpicked_init(ctx, picks)
        for node in uses:
            branch: cst.If | None
            if found is not None and exclusive_branch(ctx, node, found[0]) is None:
                branch = found[1]
                what = "initialises the process group without choosing a GPU"
            else:
                branch = unset_branch(ctx, node, picks)
                what = "uses the default CUDA device without choosing a GPU"
                if branch is None:
                    continue
            test = ctx.code(branch.test).strip()
            yield Finding(
                node,
                f"the default CUDA device is used, and one branch of `if {test}:` {what} "
                "(the other branch calls set_device or passes a device index): on that path "
                "every rank lands on GPU 0; call torch.cuda.set_device(local_rank) on both "
                "paths",
                unproven=_started_elsewhere(ctx, branch, node),
            )


def _launched_per_gpu_elsewhere(ctx: FileContext) -> bool:
    """A Python launcher of the project that leads into this file may give each worker its
    own `CUDA_VISIBLE_DEVICES` (`Project.launched_per_gpu_elsewhere`)."""
    project = project_of(ctx)
    return project is not None and project.launched_per_gpu_elsewhere(ctx.path)


def _test_module_constant(ctx: FileContext, node: cst.CSTNode) -> bool:
    """`node` is module-level code of a pytest test module (`DEVICE = torch.device("cuda")`):
    its single-process tests use it too, and which of its uses the distributed tests'
    workers reach is out of sight."""
    return is_test_module(ctx) and ctx.enclosing_function(node) is None


def _fallback_start(ctx: FileContext, init: cst.Call) -> bool:
    """`init` runs only where no process group exists yet (`if not dist.is_initialized():
    dist.init_process_group(...)`, or the `else` of `if dist.is_initialized():`): the group
    is normally started out of sight (a test fixture, a launcher's setup), by code that may
    have chosen the GPU."""
    return any(
        type(ancestor) is cst.If
        and (side := _initialized_side(ctx, ancestor, started=False)) is not None
        and ctx.is_inside(init, side)
        for ancestor in ctx.ancestors(init)
    )


def _started_elsewhere(ctx: FileContext, branch: cst.If, use: cst.CSTNode) -> bool:
    """`use` runs on the side of `branch` where the process group is already initialised
    (`if dist.is_initialized():`, or the `else` of `if not dist.is_initialized():`): the
    code that started it, and may have chosen the GPU, is out of sight."""
    side = _initialized_side(ctx, branch, started=True)
    return side is not None and ctx.is_inside(use, side)


def _initialized_side(ctx: FileContext, branch: cst.If, started: bool) -> cst.CSTNode | None:
    """For `if [not] dist.is_initialized():`, the branch where the process group is already
    started (`started`) or not yet; None for any other test."""
    test = branch.test
    negated = type(test) is cst.UnaryOperation and type(test.operator) is cst.Not
    if type(test) is cst.UnaryOperation and negated:
        test = test.expression
    if not (type(test) is cst.Call and ctx.call_name(test) == _IS_INITIALIZED):
        return None
    return branch.orelse if negated == started else branch.body


def _receiver(node: cst.CSTNode) -> cst.BaseExpression | None:
    """`model` of `model.cuda()` / `model.to(...)`."""
    if type(node) is cst.Call and type(node.func) is cst.Attribute:
        return node.func.value
    return None


def _never_runs(ctx: FileContext, use: cst.CSTNode) -> bool:
    """`model.cuda()` that raises before it places anything: `model` is never bound on
    that path, or is an object of a class of this file that is no `nn.Module` and has no
    `.cuda()` (AttributeError)."""
    receiver = _receiver(use)
    if receiver is None:
        return False
    return never_bound(ctx, receiver, use) or is_module(ctx, receiver, use) is False


def _receiver_out_of_sight(ctx: FileContext, use: cst.CSTNode) -> bool:
    """The object moved is made by a class of another project module: whether it is an
    `nn.Module` (or has a `.cuda()` at all) is out of sight."""
    receiver = _receiver(use)
    return (
        receiver is not None
        and is_module(ctx, receiver, use) is None
        and made_by_project_class(ctx, receiver, use)
    )


def _runs_in_a_callback(ctx: FileContext, node: cst.CSTNode) -> bool:
    """`node` runs in a nested function the file never calls, only hands over (a
    training-step callback returned to a trainer library): the caller, which may have set
    the device, is out of sight."""
    func = ctx.enclosing_function(node)
    return (
        func is not None
        and type(ctx.scope(func)) is cst.FunctionDef
        and not outside_calls(ctx, func)
    )


def _wrapped_on_default_device(ctx: FileContext, uses: list[cst.CSTNode]) -> Iterator[Finding]:
    """`model.cuda()` wrapped in `DDP(model, device_ids=[...])` where nothing sets the
    process's device: the module sits on GPU 0 in every process, whatever `device_ids`
    says."""
    for use in uses:
        wrap = wrapped_with_device_ids(ctx, use)
        if wrap is None:
            continue
        ids = keyword(wrap, "device_ids")
        shown = ctx.code(ids.value) if ids is not None else "[...]"
        yield Finding(
            use,
            f"`{ctx.code(use)}` puts the model on the current CUDA device, which is GPU 0 "
            "in every process (this file never calls torch.cuda.set_device), while DDP is "
            f"given device_ids={shown}: every rank's copy sits on GPU 0 (NCCL's "
            "duplicate-GPU error, or a device mismatch in DDP); call "
            "torch.cuda.set_device(local_rank) first, or move the model with "
            "`.cuda(local_rank)`",
        )

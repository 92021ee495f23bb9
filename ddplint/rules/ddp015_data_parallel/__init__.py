"""DDP015: torch.nn.DataParallel."""

from __future__ import annotations

import os
from collections.abc import Iterator

import libcst as cst

from ddplint.context import FileContext
from ddplint.diagnostics import Applicability, Severity
from ddplint.domain import domain_of
from ddplint.domain.apis import OTHER_DISTRIBUTED_WRAPPERS
from ddplint.domain.ddp_facts import DDP_CLASSES, facts_of
from ddplint.domain.local_rank_names import LocalRankNames
from ddplint.names import dotted
from ddplint.rule import Finding, FixSpec, Rule, register

_DATA_PARALLEL = "torch.nn.DataParallel"


def _ddp_spelling(ctx: FileContext) -> str | None:
    """How this file can name DistributedDataParallel without a new import."""
    for local, full in ctx.imports.bindings.items():
        if ctx.imports.resolve(cst.Name(local)) in DDP_CLASSES and full:
            return local
    bindings = ctx.imports.bindings
    if bindings.get("torch") == "torch":
        return "torch.nn.parallel.DistributedDataParallel"
    for local, full in bindings.items():
        if full == "torch.nn":
            return f"{local}.parallel.DistributedDataParallel"
    return None


def _fix(ctx: FileContext, call: cst.Call) -> FixSpec | None:
    if len(call.args) != 1 or call.args[0].keyword is not None or call.args[0].star:
        return None
    if type(ctx.parent(call)) is cst.Attribute:
        # `DataParallel(model).cuda()`: the model is still on the CPU when wrapped, which
        # DistributedDataParallel(device_ids=...) rejects.
        return None
    if not any(True for _ in ctx.calls_to("torch.distributed.init_process_group")):
        return None
    ddp = _ddp_spelling(ctx)
    local_rank = LocalRankNames(ctx).at(call)
    if ddp is None or local_rank is None:
        return None
    model = ctx.code(call.args[0].value)
    return FixSpec(
        f"Replace with `{ddp}(..., device_ids=[{local_rank}])`",
        replacements=((call, f"{ddp}({model}, device_ids=[{local_rank}])"),),
        applicability=Applicability.UNSAFE,
    )


def _in_test(ctx: FileContext, call: cst.Call) -> bool:
    """A unit test (`test_*.py`, `*_test.py`, a `test_*` function): it wraps a toy model to
    check behaviour, it does not train."""
    name = os.path.basename(ctx.path)
    if name.startswith("test_") or name.endswith("_test.py"):
        return True
    func = ctx.enclosing_function(call)
    return func is not None and func.name.value.startswith("test")


def _evaluated(ctx: FileContext, call: cst.Call) -> bool:
    """The wrapped model is put in eval mode: `DataParallel(m).eval()`, or `.eval()` on
    the module it wraps or on the name the wrapper is bound to (before or after)."""
    parent = ctx.parent(call)
    if type(parent) is cst.Attribute and parent.attr.value == "eval":
        return True
    names = {dotted(call.args[0].value)} if call.args else set()
    statement = ctx.statement(call)
    if type(statement) is cst.Assign and ctx.is_inside(call, statement.value):
        names.update(dotted(t.target) for t in statement.targets)
    names.discard(None)
    return any(
        type(c.func) is cst.Attribute and dotted(c.func.value) in names
        for c in ctx.method_calls("eval")
    )


def _inference_only(ctx: FileContext, call: cst.Call) -> bool:
    """DataParallel over a model in eval mode in a file that never trains (no
    `backward()`, no optimizer): multi-GPU inference, which DDP does not replace."""
    return not domain_of(ctx).loops.trains and _evaluated(ctx, call)


@register
class DataParallelUsed(Rule):
    code = "DDP015"
    name = "data-parallel"
    severity = Severity.WARNING
    default = False
    summary = "nn.DataParallel: single process, GIL-bound, uneven GPU 0 memory"
    requires_distributed = False
    explanation = """
## What it does
Flags `torch.nn.DataParallel(...)` (any spelling: `nn.DataParallel`,
`torch.nn.parallel.DataParallel`, `from torch.nn import DataParallel as DP`). A file that
also wraps with `DistributedDataParallel`, directly or through a helper of the file or the
project such as `smart_DDP(model)`, or with another multi-process wrapper (apex's or
DeepScale's `DistributedDataParallel`, `deepspeed.initialize`, FSDP, Horovod's
`DistributedOptimizer`) (DataParallel as the fallback when the script is started
without a launcher), is left alone, and so is a call on the single-process side of a
distributed switch (`if args.distributed: ... else: DataParallel(model)`), and so are unit
tests (`test_*.py`, `test_*` functions)
and inference: a model put in eval mode (`DataParallel(model).eval()`, `model.eval()`) in a
file that neither calls `backward()` nor builds an optimizer (validation, feature
extraction for FID, batch prediction).

Opt-in (not in the default rule set; `--extend-select DDP015`): choosing DataParallel
for a single-machine script is a cost, not a bug, and at first contact with unseen
repositories most of its findings were fallback paths maintainers keep.

## Why is this bad?
DataParallel runs in one Python process that drives every GPU from threads: it copies the
model to every GPU on every forward pass, scatters the batch from GPU 0 and gathers the
outputs back on GPU 0. The threads compete for the GIL, and GPU 0 holds the outputs (and
usually the loss) of the whole batch, so its memory fills first. PyTorch recommends
DistributedDataParallel (one process per GPU) even on a single machine; it is faster.

## Example
```python
model = nn.DataParallel(model).cuda()
```

## Use instead
```python
local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
dist.init_process_group("nccl")
model = DDP(model.cuda(local_rank), device_ids=[local_rank])
```
Then start one process per GPU with `torchrun --nproc_per_node=<gpus> train.py`, shard the
data with a `DistributedSampler` (and call `set_epoch`), divide the global batch size by the
number of processes, and save checkpoints from rank 0 only (`model.module.state_dict()`).

## Fix safety
The fix is offered only in files that already initialise a process group and hold a
local-rank variable where DataParallel is called; it replaces the call with
`DistributedDataParallel(model, device_ids=[local_rank])`. It is unsafe: the script must
be launched with torchrun (one process per GPU), the model must already be on the local
GPU, and data sharding, batch size and checkpointing must be adapted as described above.

## References
- https://pytorch.org/docs/stable/generated/torch.nn.DataParallel.html
- https://pytorch.org/docs/stable/notes/cuda.html#use-nn-parallel-distributeddataparallel-instead-of-multiprocessing-or-nn-dataparallel
"""
    fixable = Applicability.UNSAFE
    flag = (
        """import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(10, 10), nn.ReLU())
if torch.cuda.device_count() > 1:
    model = nn.DataParallel(model)
model = model.cuda()
""",
        """import torch
from torch.nn import DataParallel as DP
from torchvision.models import resnet50

net = DP(resnet50(), device_ids=[0, 1]).cuda()
""",
        """import os
import torch
import torch.distributed as dist

local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
dist.init_process_group("nccl")
model = torch.nn.Linear(8, 8).cuda(local_rank)
model = torch.nn.parallel.DataParallel(model)
""",
    )
    allow = (
        """import torch
from torch import nn
from torch.nn.parallel import DistributedDataParallel

def unwrap(model):
    if isinstance(model, (nn.DataParallel, DistributedDataParallel)):
        return model.module
    return model
""",
        """import os
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

model = nn.Linear(8, 8).cuda()
if "LOCAL_RANK" in os.environ:
    local_rank = int(os.environ["LOCAL_RANK"])
    dist.init_process_group("nccl")
    model = DDP(model, device_ids=[local_rank])
elif torch.cuda.device_count() > 1:
    model = nn.DataParallel(model)
""",
        """import torch
from torch import nn

model = nn.Linear(8, 8)
model = model.to("cuda" if torch.cuda.is_available() else "cpu")
""",
        """import torch
from torch import nn

def predict(batches, path):
    model = nn.Linear(8, 2)
    model.load_state_dict(torch.load(path))
    model = nn.DataParallel(model).eval().cuda()
    with torch.no_grad():
        return [model(x.cuda()).argmax(1) for x in batches]
""",
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        calls = list(ctx.calls_to(_DATA_PARALLEL))
        if not calls or facts_of(ctx).ddp_wraps or facts_of(ctx).helper_wraps:
            return
        if any(ctx.calls_to(*OTHER_DISTRIBUTED_WRAPPERS)):
            return  # apex's / DeepSpeed's / FSDP's multi-process wrap: DataParallel is the fallback
        for call in calls:
            if _in_test(ctx, call) or _inference_only(ctx, call):
                continue
            if domain_of(ctx).gates.single_process(call):
                continue  # the fallback when the script is started without a launcher
            yield Finding(
                call,
                "nn.DataParallel runs one process that drives every GPU from threads: "
                "GIL-bound, replicates the model every step and gathers outputs on GPU 0 "
                "(uneven memory). DistributedDataParallel with one process per GPU "
                "(torchrun) is faster, even on one machine",
                fix=_fix(ctx, call),
            )

"""DDP017: a model with BatchNorm layers wrapped in DDP without SyncBatchNorm."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from ddplint.context import FileContext
from ddplint.diagnostics import Applicability, Severity
from ddplint.domain import domain_of
from ddplint.domain.ddp_facts import argument, facts_of
from ddplint.domain.model_layers import ModelLayers, handles_batchnorm
from ddplint.rule import Finding, FixSpec, Rule, register

_MESSAGE = (
    "model with BatchNorm layers wrapped in DDP without SyncBatchNorm: each rank normalises "
    "with statistics of its own per-GPU batch. Fine for large per-GPU batches; for small ones "
    "use nn.SyncBatchNorm.convert_sync_batchnorm(model) before the wrap"
)


def _sync_spelling(ctx: FileContext) -> str | None:
    bindings = ctx.imports.bindings
    if bindings.get("torch") == "torch":
        return "torch.nn.SyncBatchNorm"
    for local, full in bindings.items():
        if full == "torch.nn":
            return f"{local}.SyncBatchNorm"
    return None


def _fix(ctx: FileContext, call: cst.Call) -> FixSpec | None:
    model = argument(call, 0, "module")
    spelling = _sync_spelling(ctx)
    if type(model) is not cst.Name or spelling is None:
        return None
    statement = ctx.statement(call)
    line = ctx.parent(statement)
    if type(line) is not cst.SimpleStatementLine or len(line.body) != 1:
        return None
    if not isinstance(ctx.parent(line), (cst.IndentedBlock, cst.Module)):
        return None
    return FixSpec(
        "Convert BatchNorm layers to SyncBatchNorm before the wrap",
        insertions=((line, f"{model.value} = {spelling}.convert_sync_batchnorm({model.value})"),),
        applicability=Applicability.UNSAFE,
    )


@register
class BatchNormWithoutSyncBatchNorm(Rule):
    code = "DDP017"
    name = "batchnorm-without-syncbn"
    severity = Severity.INFO
    default = False  # opt-in: an opinion (info): first contact 0 true / 0 false / 1 debatable
    summary = "Model with BatchNorm wrapped in DDP without SyncBatchNorm"
    explanation = """
## What it does
Reports a `DistributedDataParallel(...)` wrap of a model built in the same file with
BatchNorm layers (`nn.BatchNorm1d/2d/3d`, directly or inside a model class or builder of
the file, or a torchvision model that uses BatchNorm such as `resnet50()`), when the file
never converts them with `nn.SyncBatchNorm.convert_sync_batchnorm`. Files that use
`SyncBatchNorm` at all, or handle BatchNorm layers by hand (`isinstance(m, nn.BatchNorm2d)`,
e.g. to freeze them), are left alone, as are models with GroupNorm or LayerNorm, and
models that train in eval mode (the training step calls `model.eval()` and nothing calls
`model.train()`: a linear probe on a frozen backbone, where BatchNorm uses its running
statistics and per-rank batch statistics never matter), and files that train nothing (no
`backward()`) and put the model in eval mode only (a teacher generating soft labels).

## Why is this bad?
Under DDP each process normalises with the mean and variance of its *own* per-GPU batch,
and keeps its own running statistics (DDP broadcasts rank 0's buffers each forward by
default). With small per-GPU batches (detection, segmentation, large inputs) these
statistics are noisy and accuracy drops compared with the same global batch on one GPU.
With large per-GPU batches (say 32 or more) per-rank statistics are fine and
SyncBatchNorm only adds a collective per BatchNorm layer, so this is a hint, not a bug.

## Example
```python
model = torchvision.models.resnet50().cuda(local_rank)
model = DDP(model, device_ids=[local_rank])
```

## Use instead
```python
model = torchvision.models.resnet50()
model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
model = DDP(model.cuda(local_rank), device_ids=[local_rank])
```

## Fix safety
The fix inserts `model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)` before the
wrap (only when the wrapped model is a plain name). It is unsafe: it changes the training
statistics and adds a collective to every BatchNorm forward, which also must then run on
every rank in the same order.

## References
- https://pytorch.org/docs/stable/generated/torch.nn.SyncBatchNorm.html
- https://pytorch.org/docs/stable/generated/torch.nn.parallel.DistributedDataParallel.html
"""
    fixable = Applicability.UNSAFE
    flag = (
        """import os
import torch
import torch.distributed as dist
import torchvision
from torch.nn.parallel import DistributedDataParallel as DDP

local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
dist.init_process_group("nccl")
model = torchvision.models.resnet50(num_classes=10).cuda(local_rank)
model = DDP(model, device_ids=[local_rank])
""",
        """import os
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 16, 3)
        self.bn = nn.BatchNorm2d(16)

    def forward(self, x):
        return self.bn(self.conv(x))

local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
dist.init_process_group("nccl")
net = Net().cuda(local_rank)
net = DDP(net, device_ids=[local_rank])
""",
        """import os
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel

def build():
    return nn.Sequential(nn.Linear(16, 32), nn.BatchNorm1d(32), nn.ReLU())

def wrap(model, local_rank):
    return DistributedDataParallel(model.cuda(local_rank), device_ids=[local_rank])

local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
dist.init_process_group("nccl")
model = wrap(build(), local_rank)
""",
    )
    allow = (
        """import os
import torch
import torch.distributed as dist
import torchvision
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
dist.init_process_group("nccl")
model = torchvision.models.resnet50()
model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
model = DDP(model.cuda(local_rank), device_ids=[local_rank])
""",
        """import os
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
dist.init_process_group("nccl")
model = nn.Sequential(nn.Conv2d(3, 16, 3), nn.GroupNorm(4, 16), nn.ReLU())
model = DDP(model.cuda(local_rank), device_ids=[local_rank])
""",
        """import os
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torchvision.models import resnet18

local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
dist.init_process_group("nccl")
head = nn.Sequential(nn.Linear(512, 512), nn.BatchNorm1d(512))
model = resnet18(norm_layer=lambda c: nn.GroupNorm(32, c))
model = DDP(model.cuda(local_rank), device_ids=[local_rank])
""",
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        wraps = facts_of(ctx).ddp_wraps
        if not wraps or handles_batchnorm(ctx):
            return
        if domain_of(ctx).loops.trains_in_eval_mode(facts_of(ctx).is_ddp_model):
            return  # a frozen model (linear probe): BatchNorm uses its running statistics
        if _only_evaluated(ctx):
            return  # nothing trains here (a teacher labelling data): running statistics
        layers = ModelLayers(ctx)
        for call in wraps:
            model = argument(call, 0, "module")
            if model is None:
                continue
            if layers.builds_batchnorm:
                if layers.has_batchnorm(model, call):
                    yield Finding(call, _MESSAGE, fix=_fix(ctx, call))
            elif (built := layers.runtime_architecture(model, call)) is not None:
                shown = ctx.code(built.func).strip()
                yield Finding(
                    call,
                    f"the model's architecture is chosen at run time (`{shown}`) and wrapped in "
                    "DDP without SyncBatchNorm: ddplint cannot tell whether it has BatchNorm "
                    "layers. Most torchvision classification models do (ResNet, DenseNet, "
                    "EfficientNet, ...); with those each rank normalises with its own per-GPU "
                    "batch statistics, fine for large per-GPU batches; for small ones use "
                    "nn.SyncBatchNorm.convert_sync_batchnorm(model) before the wrap",
                )


def _only_evaluated(ctx: FileContext) -> bool:
    """The file runs no `backward()` and puts a DDP model in eval mode, never in train
    mode: BatchNorm normalises with its running statistics, the same on every rank."""
    if domain_of(ctx).backward.sites:
        return False
    is_ddp = facts_of(ctx).is_ddp_model
    modes = {
        call.func.attr.value
        for call in ctx.method_calls("eval", "train")
        if type(call.func) is cst.Attribute and is_ddp(call.func.value, call)
    }
    return modes == {"eval"}

"""DDP017: a model with BatchNorm layers wrapped in DDP without SyncBatchNorm."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

import libcst as cst

from ddplint.context import FileContext
from ddplint.diagnostics import Applicability, Severity
from ddplint.facts import argument, keyword, last_name
from ddplint.names import dotted
from ddplint.rule import Finding, FixSpec, Rule, register

_BATCHNORM = frozenset(
    f"torch.nn.{prefix}BatchNorm{d}d" for prefix in ("", "Lazy") for d in (1, 2, 3)
)
# torchvision classification models built with nn.BatchNorm2d by default.
_TORCHVISION_BN = re.compile(
    r"^(resnet\d+|resnext\d+_\w+|wide_resnet\d+_\d|densenet\d+|vgg\d+_bn|inception_v3"
    r"|googlenet|efficientnet_(b\d|v2_[sml])|mobilenet_v2|mobilenet_v3_(large|small)"
    r"|regnet_[xy]_\w+|mnasnet\d_\d+|shufflenet_v2_x\d_\d)$"
)
_SYNC_NAME = re.compile(r"sync_?b(atch_?)?n(orm)?", re.IGNORECASE)
_PASS_THROUGH = frozenset({"to", "cuda", "float", "half", "bfloat16", "train", "to_empty"})


def _is_bn_model_call(ctx: FileContext, call: cst.Call) -> bool:
    name = ctx.call_name(call)
    if name is None or not name.startswith("torchvision.models."):
        return False
    if not _TORCHVISION_BN.match(name.rpartition(".")[2]):
        return False
    norm = keyword(call, "norm_layer")
    if norm is None:
        return True
    return ctx.qualname(norm.value) in _BATCHNORM


def _mentions_sync_batchnorm(ctx: FileContext) -> bool:
    """SyncBatchNorm (or apex's convert_syncbn_model), or BatchNorm layers handled by
    hand (`isinstance(m, nn.BatchNorm2d)`: frozen or replaced)."""
    for local, full in ctx.imports.bindings.items():
        if _SYNC_NAME.search(full) or _SYNC_NAME.search(local):
            return True
    for call in ctx.calls:
        func = last_name(call.func)
        if func is None:
            continue
        if _SYNC_NAME.search(func):
            return True
        if func == "convert_sync_batchnorm" or (dotted(call.func) or "").endswith("SyncBatchNorm"):
            return True
        if func == "isinstance" and len(call.args) == 2:
            classes = call.args[1].value
            elements = (
                [e.value for e in classes.elements]
                if isinstance(classes, (cst.Tuple, cst.List))
                else [classes]
            )
            for element in elements:
                qual = ctx.qualname(element) or ""
                if (
                    qual in _BATCHNORM
                    or qual.startswith("torch.nn.BatchNorm")
                    or (qual.startswith("torch.nn.modules.batchnorm"))
                ):
                    return True
                if "BatchNorm" in (dotted(element) or ""):
                    return True
    return False


class _BatchNormIndex:
    """Which constructions in the file build BatchNorm layers."""

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        self.sources: list[cst.Call] = [
            c for c in ctx.calls if ctx.call_name(c) in _BATCHNORM or _is_bn_model_call(ctx, c)
        ]
        self.source_set = set(self.sources)
        self.bearing: set[str] = set()
        frontier = list(self.sources)
        while frontier:
            call = frontier.pop()
            for owner in self._owners(call):
                if owner in self.bearing:
                    continue
                self.bearing.add(owner)
                frontier.extend(
                    c for c in ctx.calls if isinstance(c.func, cst.Name) and c.func.value == owner
                )

    def _owners(self, node: cst.CSTNode) -> Iterator[str]:
        for ancestor in self.ctx.ancestors(node):
            if isinstance(ancestor, (cst.ClassDef, cst.FunctionDef)):
                yield ancestor.name.value
                if isinstance(ancestor, cst.ClassDef):
                    return

    def builds_bn(self, expr: cst.BaseExpression) -> bool:
        """Whether the expression constructing a model creates BatchNorm layers."""
        for node in self.ctx.walk(expr):
            if not isinstance(node, cst.Call):
                continue
            if node in self.source_set:
                return True
            if isinstance(node.func, cst.Name) and node.func.value in self.bearing:
                return True
        return False


def _runtime_torchvision_model(ctx: FileContext, call: cst.Call) -> bool:
    """`models.__dict__[args.arch](...)`, `getattr(models, arch)(...)`,
    `models.get_model(name)`: a torchvision model chosen at run time."""
    func = call.func
    if isinstance(func, cst.Subscript):
        return (ctx.qualname(func.value) or "") == "torchvision.models.__dict__"
    if isinstance(func, cst.Call) and last_name(func.func) == "getattr" and func.args:
        return (ctx.qualname(func.args[0].value) or "") == "torchvision.models"
    return ctx.call_name(call) == "torchvision.models.get_model"


def _model_built_by(
    ctx: FileContext,
    builds: Callable[[cst.Call], bool],
    expr: cst.BaseExpression,
    at: cst.CSTNode,
    depth: int = 3,
) -> cst.Call | None:
    """The construction call of the model `expr` holds for which `builds(call)` holds,
    followed by the resolver and through `.cuda()` / `.to()`-style calls."""
    for value in ctx.resolver.values(expr, at):
        made = value.expr
        if not isinstance(made, cst.Call):
            continue
        func = made.func
        if isinstance(func, cst.Attribute) and func.attr.value in _PASS_THROUGH:
            if ctx.qualname(func) is None and depth > 0:
                found = _model_built_by(ctx, builds, func.value, value.at, depth - 1)
                if found is not None:
                    return found
        elif builds(made):
            return made
    return None


def _model_has_bn(
    ctx: FileContext, index: _BatchNormIndex, expr: cst.BaseExpression, at: cst.CSTNode
) -> bool:
    return _model_built_by(ctx, index.builds_bn, expr, at) is not None


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
    if not isinstance(model, cst.Name) or spelling is None:
        return None
    statement = ctx.statement(call)
    line = ctx.parent(statement)
    if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
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
statistics and per-rank batch statistics never matter).

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
        wraps = ctx.facts.ddp_wraps
        if not wraps or _mentions_sync_batchnorm(ctx):
            return
        if ctx.domain.loops.trains_in_eval_mode(ctx.facts.is_ddp_model):
            return  # a frozen model (linear probe): BatchNorm uses its running statistics
        index = _BatchNormIndex(ctx)
        for call in wraps:
            model = argument(call, 0, "module")
            if model is None:
                continue
            if not index.sources:
                yield from self._runtime_model(ctx, call, model)
                continue
            if _model_has_bn(ctx, index, model, call):
                yield Finding(
                    call,
                    "model with BatchNorm layers wrapped in DDP without SyncBatchNorm: each "
                    "rank normalises with statistics of its own per-GPU batch. Fine for large "
                    "per-GPU batches; for small ones use "
                    "nn.SyncBatchNorm.convert_sync_batchnorm(model) before the wrap",
                    fix=_fix(ctx, call),
                )

    @staticmethod
    def _runtime_model(
        ctx: FileContext, wrap: cst.Call, model: cst.BaseExpression
    ) -> Iterator[Finding]:
        def chosen(call: cst.Call) -> bool:
            return _runtime_torchvision_model(ctx, call)

        built = _model_built_by(ctx, chosen, model, wrap)
        if built is not None:
            shown = ctx.code(built.func).strip()
            yield Finding(
                wrap,
                f"the model's architecture is chosen at run time (`{shown}`) and wrapped in "
                "DDP without SyncBatchNorm: ddplint cannot tell whether it has BatchNorm "
                "layers. Most torchvision classification models do (ResNet, DenseNet, "
                "EfficientNet, ...); with those each rank normalises with its own per-GPU "
                "batch statistics, fine for large per-GPU batches; for small ones use "
                "nn.SyncBatchNorm.convert_sync_batchnorm(model) before the wrap",
            )

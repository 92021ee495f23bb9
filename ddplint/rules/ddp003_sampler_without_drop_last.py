"""DDP003: a training (shuffling) DistributedSampler with no `drop_last=True` anywhere."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from ddplint.analysis.samplers import (
    LOADER_DROP_LAST,
    SAMPLER_DROP_LAST,
    distributed_samplers,
    is_evaluation_sampler,
    shuffle_of,
)
from ddplint.context import FileContext
from ddplint.diagnostics import Severity
from ddplint.facts import argument, is_false
from ddplint.rule import Finding, Rule, register


def _drop_last_state(value: cst.BaseExpression | None) -> str:
    """ "false" when absent or literally False, "true" otherwise (True, or computed:
    we give a computed value the benefit of the doubt)."""
    if value is None or is_false(value):
        return "false"
    return "true"


def _has_star_kwargs(call: cst.Call) -> bool:
    return any(arg.star == "**" for arg in call.args)


def _batch_sampler_drops(ctx: FileContext, loader: cst.Call) -> bool:
    """`batch_sampler=BatchSampler(sampler, batch_size, drop_last=True)` (or computed)."""
    batch = argument(loader, 4, "batch_sampler")
    if batch is None:
        return False
    for value in ctx.resolver.values(batch, loader):
        expr = value.expr
        if isinstance(expr, cst.Call):
            if _has_star_kwargs(expr):
                return True
            if _drop_last_state(argument(expr, 2, "drop_last")) == "true":
                return True
    return False


@register
class SamplerWithoutDropLast(Rule):
    code = "DDP003"
    name = "sampler-without-drop-last"
    severity = Severity.WARNING
    summary = "Training DistributedSampler and its DataLoader both keep drop_last=False"
    explanation = """
## What it does
Flags a shuffling (training) `DistributedSampler` when neither the sampler nor the
DataLoader built on it sets `drop_last=True`. Evaluation samplers (`shuffle=False`) are left
alone, and so is a computed `drop_last=` value.

## Why is this bad?
When the dataset size is not a multiple of the number of processes, `DistributedSampler`
pads its index list by repeating samples from the start so that every rank gets the same
number of samples: some samples are seen twice per epoch. Without `drop_last=True` on the
DataLoader, the last batch of each epoch is also short, which gives noisier steps and can
break BatchNorm on a batch of one. This does not hang: padding keeps the ranks' step counts
equal (hangs come from custom sharding such as `dataset[rank::world_size]`).

## Example
```python
sampler = DistributedSampler(train_set, shuffle=True)
loader = DataLoader(train_set, batch_size=64, sampler=sampler)
```

## Use instead
```python
sampler = DistributedSampler(train_set, shuffle=True, drop_last=True)
loader = DataLoader(train_set, batch_size=64, sampler=sampler, drop_last=True)
```

## Fix safety
No fix is offered: dropping the tail changes which samples are trained on each epoch, a
choice for the author.

## References
- https://pytorch.org/docs/stable/data.html#torch.utils.data.distributed.DistributedSampler
- https://pytorch.org/docs/stable/data.html#torch.utils.data.DataLoader
"""
    flag = (
        """
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

def build(train_set):
    dist.init_process_group("nccl")
    sampler = DistributedSampler(train_set, shuffle=True)
    return DataLoader(train_set, batch_size=64, sampler=sampler, num_workers=4)
""",
        """
import torch
import torch.distributed as dist

dist.init_process_group("nccl")
train_set = torch.utils.data.TensorDataset(torch.randn(100, 3))
loader = torch.utils.data.DataLoader(
    train_set, batch_size=16, sampler=torch.utils.data.distributed.DistributedSampler(train_set)
)
""",
        """
import torch.distributed as dist
from torch.utils.data import BatchSampler, DataLoader
from torch.utils.data import DistributedSampler as DS

def build(ds):
    dist.init_process_group("nccl")
    batches = BatchSampler(DS(ds), batch_size=32, drop_last=False)
    return DataLoader(ds, batch_sampler=batches)
""",
    )
    allow = (
        """
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

def build(train_set):
    dist.init_process_group("nccl")
    sampler = DistributedSampler(train_set, shuffle=True)
    return DataLoader(train_set, batch_size=64, sampler=sampler, drop_last=True)
""",
        """
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

def build(val_set):
    dist.init_process_group("nccl")
    sampler = DistributedSampler(val_set, shuffle=False)
    return DataLoader(val_set, batch_size=64, sampler=sampler)
""",
        """
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

def build(ds, is_train):
    dist.init_process_group("nccl")
    sampler = DistributedSampler(ds, shuffle=True, drop_last=is_train)
    return DataLoader(ds, batch_size=64, sampler=sampler)
""",
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        for sampler in distributed_samplers(ctx):
            call = sampler.call
            if shuffle_of(call) is not True or _has_star_kwargs(call):
                continue
            if is_evaluation_sampler(ctx, sampler):
                continue
            if _drop_last_state(argument(call, SAMPLER_DROP_LAST, "drop_last")) == "true":
                continue
            loaders = sampler.loaders
            if not loaders:
                # The loader is built elsewhere: we cannot tell what it sets.
                continue
            if any(
                _has_star_kwargs(loader.call)
                or _drop_last_state(argument(loader.call, LOADER_DROP_LAST, "drop_last")) == "true"
                or (loader.via == "batch_sampler" and _batch_sampler_drops(ctx, loader.call))
                for loader in loaders
            ):
                continue
            yield Finding(
                call,
                "Training DistributedSampler without drop_last=True (on the sampler or its "
                "DataLoader): when the dataset does not split evenly across ranks the sampler "
                "pads by repeating samples (seen twice per epoch) and the last batch may be "
                "short; this does not hang",
            )

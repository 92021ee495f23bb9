"""DDP009: a training DataLoader in a DDP script with no DistributedSampler or sharding."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from ddplint.context import FileContext
from ddplint.diagnostics import Severity
from ddplint.domain import domain_of
from ddplint.domain.ddp_facts import (
    LOADER_CLASSES,
    argument,
    facts_of,
    given_argument,
    is_false,
    is_true,
)
from ddplint.domain.project_view import project_of
from ddplint.domain.runners import one_process
from ddplint.rule import Finding, Rule, register
from ddplint.rules.ddp009_loader_without_sharding.loader_sharding import (
    Sharding,
    plain_sampler,
    serves_evaluation,
)


@register
class LoaderWithoutSharding(Rule):
    code = "DDP009"
    name = "loader-without-sharding"
    severity = Severity.WARNING
    # opt-in: first contact, fresh103 to fresh141 (bench/realworld/first_contact.py): 3 / 3 / 1
    default = False
    summary = "Training DataLoader with no DistributedSampler or sharding: every rank sees all data"
    explanation = """
## What it does
In a file that wraps a model in DDP, flags a training `DataLoader` (one built with
`shuffle=True`, or iterated by a loop that calls `backward()`) that has no sampler and whose
dataset is not split between ranks by other means.

Left alone: loaders with a `sampler=`/`batch_sampler=` other than a plain
`RandomSampler`/`SequentialSampler` (or a `BatchSampler` over one; not one drawing with
replacement, `WeightedRandomSampler` or `RandomSampler(..., replacement=True)`, which walks
no whole dataset: whether the ranks draw alike is their seeds' question), datasets sharded by
rank (`ds[rank::world_size]`, `Subset` by rank, an `IterableDataset` that reads the rank,
`split_by_node`, `split_dataset_by_node`, `.shard(...)`), random synthetic data, loaders built in a
branch that only runs without distribution (`if not args.distributed:`), and evaluation
loaders
(`shuffle=False`, built under `torch.no_grad()` or in an eval function, named
`val`/`test`/`eval`).

Proven when a loop over the loader runs `backward()` in sight.
A loader that is only shuffled, or whose dataset comes from code out of sight (which may
shard it itself), is reported as unproven (shown under `--preview`): it may serve a
one-batch peek or a trainer elsewhere.

## Why is this bad?
DDP does not split the data: each process iterates whatever its loader yields. Without a
`DistributedSampler` every rank walks the whole dataset, so one "epoch" processes the data
world-size times (N x duplicated epochs, N times the cost for the same learning), and the
per-rank gradients are computed on overlapping batches.

## Example
```python
model = DDP(model, device_ids=[local_rank])
loader = DataLoader(train_set, batch_size=32, shuffle=True)
```

## Use instead
```python
model = DDP(model, device_ids=[local_rank])
sampler = DistributedSampler(train_set, shuffle=True, drop_last=True)
loader = DataLoader(train_set, batch_size=32, sampler=sampler)
for epoch in range(epochs):
    sampler.set_epoch(epoch)
    ...
```

## Fix safety
No automatic fix: the sampler has to be created, passed, and re-seeded every epoch.

## References
- https://pytorch.org/docs/stable/data.html#torch.utils.data.distributed.DistributedSampler
- https://pytorch.org/tutorials/intermediate/ddp_tutorial.html
"""
    flag = (
        """
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader

def main(net, dataset_train, local_rank, train_one_epoch):
    dist.init_process_group("nccl")
    model = DDP(net.cuda(local_rank), device_ids=[local_rank])
    sampler_train = torch.utils.data.RandomSampler(dataset_train)
    batch_sampler_train = torch.utils.data.BatchSampler(sampler_train, 2, drop_last=True)
    data_loader_train = DataLoader(dataset_train, batch_sampler=batch_sampler_train)
    for epoch in range(10):
        train_one_epoch(model, data_loader_train)
""",
        """import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader

def main(net, train_set):
    local_rank = int(os.environ["LOCAL_RANK"])
    dist.init_process_group("nccl")
    model = DDP(net.cuda(local_rank), device_ids=[local_rank])
    loader = DataLoader(train_set, batch_size=32, shuffle=True, num_workers=4)
    return model, loader
""",
        """import torch
import torch.nn as nn
from torch.utils import data

def setup(net, train_ds, local_rank):
    model = nn.parallel.DistributedDataParallel(net, device_ids=[local_rank])
    train_loader = data.DataLoader(train_ds, batch_size=16)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in train_loader:
        opt.zero_grad()
        model(x).sum().backward()
        opt.step()
""",
        """import torch
from torch.nn.parallel import DistributedDataParallel as Wrap
from torch.utils.data import DataLoader, RandomSampler

def build(net, dataset, local_rank):
    model = Wrap(net, device_ids=[local_rank])
    loader = DataLoader(dataset, batch_size=8, sampler=RandomSampler(dataset))
    return model, loader
""",
    )
    allow = (
        """import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler

def build(net, train_set, val_set, local_rank):
    model = DDP(net, device_ids=[local_rank])
    sampler = DistributedSampler(train_set, shuffle=True, drop_last=True)
    train_loader = DataLoader(train_set, batch_size=32, sampler=sampler)
    val_loader = DataLoader(val_set, batch_size=64, shuffle=False)
    return model, train_loader, val_loader
""",
        """import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Subset

def build(net, dataset, local_rank):
    rank, world_size = dist.get_rank(), dist.get_world_size()
    model = DDP(net, device_ids=[local_rank])
    shard = Subset(dataset, range(rank, len(dataset), world_size))
    return model, DataLoader(shard, batch_size=32, shuffle=True)
""",
        """import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, IterableDataset

class Stream(IterableDataset):
    def __init__(self, files):
        self.files = files

    def __iter__(self):
        rank = dist.get_rank()
        for path in self.files[rank :: dist.get_world_size()]:
            yield torch.load(path)

def build(net, files, local_rank):
    model = DDP(net, device_ids=[local_rank])
    return model, DataLoader(Stream(files), batch_size=None)
""",
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        if not facts_of(ctx).ddp_wraps:
            return
        sharding: Sharding | None = None
        for call in ctx.calls_to(*LOADER_CLASSES):
            if any(arg.star for arg in call.args):
                continue
            sampler = given_argument(call, 3, "sampler") or given_argument(call, 4, "batch_sampler")
            if sampler is not None and not plain_sampler(ctx, sampler.value, call):
                continue
            shuffle = argument(call, 2, "shuffle")
            if is_false(shuffle):
                continue
            dataset = argument(call, 0, "dataset")
            if (
                serves_evaluation(ctx, call, dataset)
                or one_process(ctx, call)
                # one rank reads it: nothing duplicated
                or domain_of(ctx).gates.gate(call) is not None
            ):
                continue
            trains = domain_of(ctx).loops.feeds_training([call])
            training = trains or is_true(shuffle) or sampler is not None
            if not training or dataset is None:
                continue
            sharding = sharding or Sharding(ctx)
            if sharding.sharded(dataset, call):
                continue
            yield Finding(
                call,
                "Training DataLoader without a DistributedSampler or other sharding in a DDP "
                "script: every rank iterates the whole dataset, so each epoch processes the "
                "data world-size times; pass `sampler=DistributedSampler(dataset)` (and call "
                "`set_epoch` every epoch)",
                # Proven only when a loop over the loader runs the backward in sight; a
                # shuffled loader may as well serve a one-batch peek or code out of sight.
                unproven=not trains or _out_of_sight(ctx, dataset, call),
            )


def _out_of_sight(ctx: FileContext, dataset: cst.BaseExpression, at: cst.CSTNode) -> bool:
    """The dataset comes from code this file cannot see into, which may shard it itself
    (`np.array_split(files, world_size)[rank]` in a data module): a parameter no caller
    here passes, a function or class of another project module, or an object's method or
    attribute that no import names. Library datasets (torchvision's, `TensorDataset`) are
    in sight: they do not shard."""
    project = project_of(ctx)
    for value in ctx.resolver.values(dataset, at):
        expr = value.expr
        if not value.leaf:
            continue
        if type(expr) is cst.Name:
            if any(b.kind == "param" for b in ctx.resolver.reaching(expr.value, value.at)):
                return True
        elif type(expr) is cst.Call:
            if ctx.resolver.callees(expr):
                continue  # a function or class of this file: followed
            if ctx.call_name(expr) is None:
                return True
            if project is not None and project.resolve(ctx, expr) is not None:
                return True
        elif type(expr) is cst.Attribute and ctx.qualname(expr) is None:
            return True
    return False

"""DDP057: a sharded loader's per-process batch multiplied by the number of processes."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

from ddplint.context import FileContext
from ddplint.diagnostics import Severity
from ddplint.domain import domain_of
from ddplint.domain.apis import DEVICE_COUNT, LOADER_CLASSES
from ddplint.domain.ddp_facts import is_false
from ddplint.domain.loops import named_for
from ddplint.domain.option_defaults import option_default
from ddplint.domain.ranks import int_literal
from ddplint.domain.samplers import reads_evaluation_sampler
from ddplint.engine.resolve import argument
from ddplint.names import dotted
from ddplint.rule import Finding, Rule, register

# A batch sampler that deals batches per rank (`DistributedBucketSampler`).
_BATCH_SAMPLER = re.compile(r"^Distributed\w*(?:Batch|Bucket)\w*Sampler$")
_SPLIT_BY_NODE = "datasets.distributed.split_dataset_by_node"
_INIT = "torch.distributed.init_process_group"
_BATCH = 1  # DataLoader(dataset, batch_size, ...); DistributedBucketSampler(dataset, batch_size)
_EXAMPLE = 8  # the process count a message computes its example with


@dataclass(frozen=True)
class Multiplied:
    """`base * factor`, where `factor` holds the number of processes (`world`) or the
    node's GPU count."""

    product: cst.BinaryOperation
    base: cst.BaseExpression
    factor: cst.BaseExpression
    world: bool


@register
class BatchTimesWorldSize(Rule):
    code = "DDP057"
    name = "batch-times-world-size"
    severity = Severity.ERROR
    summary = "A sharded loader's per-process batch multiplied by the number of processes"
    explanation = """
## What it does
Flags the `batch_size` of a DataLoader whose data is split between the ranks (a
`DistributedSampler`, a batch sampler of a `Distributed...Sampler` class, or a dataset from
`split_dataset_by_node`), or of such a batch sampler, when that batch is the per-GPU batch
multiplied by the number of processes: `batch_size=args.batch_size * world_size`, with the
world size recognised as a value (`dist.get_world_size()`, `WORLD_SIZE`, a name or attribute
bound to one, the `world_size=` its function hands `init_process_group`). A product with
`torch.cuda.device_count()` (the processes of one node, under one process per GPU) is
reported too, unproven (`--preview`) unless every value the batch can hold is such a
product: `args.train_batch_size = args.per_gpu_batch_size * max(1, args.n_gpu)` in a
Hugging Face-style script keeps `n_gpu` at 1 under DDP. A batch sampler's finding is
unproven: whether its `batch_size` is each rank's batch or the global batch it slices per
rank (Megatron's `DistributedBatchSampler`) is its class's choice.

Left alone: evaluation loaders (`shuffle=False`, or named for validation or testing: a
larger batch there changes the memory used, not the result), loaders of one process (no
sharding in sight), and batches divided again before the loader gets them
(`args.batch_size * world_size // accumulation`).

## Why is this bad?
Under DDP every process builds its own DataLoader over its own shard, so the batch of one
optimizer step is the per-process batch times N. Multiplying the per-process batch by N as
well makes the step's batch `batch x N x N`: with 8 processes and 32 per GPU, 256 per
process and 2,048 per step, where one process trained with 32 (and the learning rate,
warm-up and step counts tuned for that). Each epoch also has N times fewer steps, and a
per-process batch of `batch x N` may not fit in one GPU's memory. On one process the
product is the batch itself, so the mistake hides in single-GPU testing.

## Example
```python
world_size = dist.get_world_size()
loader = DataLoader(train_set, batch_size=args.batch_size * world_size,
                    sampler=DistributedSampler(train_set))
```

## Use instead
```python
loader = DataLoader(train_set, batch_size=args.batch_size,  # per process
                    sampler=DistributedSampler(train_set))
# or, for a global batch: batch_size=args.global_batch_size // dist.get_world_size()
```

## Fix safety
No automatic fix: whether the option means a per-GPU or a global batch is the author's to
say.

## References
- https://pytorch.org/docs/stable/notes/ddp.html
- https://pytorch.org/docs/stable/data.html#torch.utils.data.distributed.DistributedSampler
"""
    flag = (
        """
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

def build(train_set, args):
    world_size = dist.get_world_size()
    return DataLoader(train_set, batch_size=args.batch_size * world_size,
                      sampler=DistributedSampler(train_set))
""",
        """
import os
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

def loaders(train_set, batch_size=64):
    size = int(os.environ["WORLD_SIZE"])
    sampler = DistributedSampler(train_set, shuffle=True)
    bs = batch_size * size
    return DataLoader(train_set, batch_size=bs, sampler=sampler, num_workers=4)
""",
        """
import torch.distributed as dist
from torch.utils.data import DataLoader
from datasets.distributed import split_dataset_by_node

def stream(ds, per_device_batch):
    world = dist.get_world_size()
    shard = split_dataset_by_node(ds, rank=dist.get_rank(), world_size=world)
    return DataLoader(shard, batch_size=per_device_batch * world)
""",
    )
    allow = (
        """
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

def build(train_set, args):
    return DataLoader(train_set, batch_size=args.global_batch // dist.get_world_size(),
                      sampler=DistributedSampler(train_set))
""",
        """
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

def build_eval(val_set, args):
    return DataLoader(val_set, batch_size=args.batch_size * dist.get_world_size(),
                      sampler=DistributedSampler(val_set, shuffle=False))
""",
        """
import torch
from torch.utils.data import DataLoader, DistributedSampler

def build(train_set, args):
    if args.local_rank == -1:
        args.n_gpu = torch.cuda.device_count()
    else:
        args.n_gpu = 1
    args.train_batch_size = args.per_gpu_train_batch_size * max(1, args.n_gpu)
    sampler = DistributedSampler(train_set)
    return DataLoader(train_set, batch_size=args.train_batch_size * args.n_gpu, sampler=sampler)
""",
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        for call in ctx.calls:
            batch = _sharded_batch(ctx, call)
            if batch is None:
                continue
            found = _multiplied(ctx, batch, call)
            if found is None:
                continue
            multiplied, every_value = found
            # A batch sampler's `batch_size` may be the global batch it slices per rank
            # (Megatron's `DistributedBatchSampler`) or each rank's: its class decides.
            loader = (ctx.call_name(call) or "") in LOADER_CLASSES
            yield Finding(
                batch,
                _message(ctx, batch, multiplied),
                unproven=not loader or not (multiplied.world or every_value),
            )


def _sharded_batch(ctx: FileContext, call: cst.Call) -> cst.BaseExpression | None:
    """The `batch_size` argument of a training DataLoader over one rank's shard, or of a
    distributed batch sampler (`DistributedBucketSampler(dataset, batch_size, ...)`)."""
    name = ctx.call_name(call) or dotted(call.func) or ""
    if name in LOADER_CLASSES:
        if not _loads_a_shard(ctx, call) or _serves_evaluation(ctx, call):
            return None
        return argument(call, _BATCH, "batch_size")
    if _BATCH_SAMPLER.search(name.rpartition(".")[2]):
        shuffle = argument(call, None, "shuffle")
        return (
            None
            if shuffle is not None and is_false(shuffle)
            else argument(call, _BATCH, "batch_size")
        )
    return None


def _loads_a_shard(ctx: FileContext, loader: cst.Call) -> bool:
    """The loader reads one rank's share: a DistributedSampler (or a class named like
    one) as `sampler=`, or a dataset `split_dataset_by_node` returned."""
    sampler = argument(loader, 3, "sampler")
    if sampler is not None:
        for value in ctx.resolver.values(sampler, loader):
            made = value.expr
            if type(made) is cst.Call and "DistributedSampler" in (
                ctx.call_name(made) or dotted(made.func) or ""
            ):
                return True
    dataset = argument(loader, 0, "dataset")
    return dataset is not None and _split_by_node(ctx, dataset, loader, 4)


def _split_by_node(ctx: FileContext, expr: cst.BaseExpression, at: cst.CSTNode, depth: int) -> bool:
    """`expr` holds what `split_dataset_by_node` returned, also through the dataset's own
    methods (`shard.with_format("torch")`, `.map(...)`, `.shuffle(...)`)."""
    if depth < 0:
        return False
    for value in ctx.resolver.values(expr, at):
        made = value.expr
        if type(made) is not cst.Call:
            continue
        if ctx.call_name(made) == _SPLIT_BY_NODE:
            return True
        func = made.func
        if (
            type(func) is cst.Attribute
            and ctx.call_name(made) is None
            and _split_by_node(ctx, func.value, value.at, depth - 1)
        ):
            return True
    return False


def _serves_evaluation(ctx: FileContext, loader: cst.Call) -> bool:
    """The loader reads an evaluation sampler, or its names say evaluation."""
    if reads_evaluation_sampler(ctx, loader):
        return True
    dataset = argument(loader, 0, "dataset")
    names = [dotted(dataset) or ""] if dataset is not None else []
    statement = ctx.statement(loader)
    if type(statement) is cst.Assign:
        names += [dotted(t.target) or "" for t in statement.targets]
    return named_for(names) == "evaluation"


def _multiplied(
    ctx: FileContext, batch: cst.BaseExpression, at: cst.CSTNode
) -> tuple[Multiplied, bool] | None:
    """The product by the process count `batch` holds on some path, and whether every
    value it can hold is such a product."""
    values = [v for v in ctx.resolver.values(batch, at) if v.leaf]
    found = [_product(ctx, v.expr, v.at) for v in values]
    products = [p for p in found if p is not None]
    if not products:
        return None
    world = [p for p in products if p.world]
    chosen = world[0] if world else products[0]
    return chosen, len(products) == len(values)


def _product(ctx: FileContext, expr: cst.BaseExpression, at: cst.CSTNode) -> Multiplied | None:
    if not (type(expr) is cst.BinaryOperation and type(expr.operator) is cst.Multiply):
        return None
    ranks = domain_of(ctx).ranks
    for factor, base in ((expr.right, expr.left), (expr.left, expr.right)):
        if ranks.is_world_size(factor, at) or _group_size(ctx, factor, at):
            return Multiplied(expr, base, factor, True)
        if _device_count(ctx, factor, at):
            return Multiplied(expr, base, factor, False)
    return None


def _group_size(ctx: FileContext, expr: cst.BaseExpression, at: cst.CSTNode) -> bool:
    """`expr` is what its function hands `init_process_group` as `world_size=` (`n_gpus`
    in `init_process_group("nccl", world_size=n_gpus, rank=rank)`)."""
    func = ctx.enclosing_function(at)
    if func is None or not isinstance(expr, (cst.Name, cst.Attribute)):
        return False
    shown = ctx.code(expr)
    return any(
        ctx.enclosing_function(init) is func
        and (given := argument(init, 3, "world_size")) is not None
        and ctx.code(given) == shown
        for init in ctx.calls_to(_INIT)
    )


def _device_count(ctx: FileContext, expr: cst.BaseExpression, at: cst.CSTNode) -> bool:
    """`expr` holds `torch.cuda.device_count()` on every path."""
    values = [v for v in ctx.resolver.values(expr, at) if v.leaf]
    return bool(values) and all(
        type(v.expr) is cst.Call and ctx.call_name(v.expr) in DEVICE_COUNT for v in values
    )


def _message(ctx: FileContext, batch: cst.BaseExpression, found: Multiplied) -> str:
    base, factor = ctx.code(found.base).strip(), ctx.code(found.factor).strip()
    count = "the number of processes" if found.world else "the node's GPU count"
    value = _known_value(ctx, found.base, found.product)
    numbers = ""
    if value is not None:
        numbers = (
            f" (with {_EXAMPLE} processes: {value * _EXAMPLE} samples per process and "
            f"{value * _EXAMPLE * _EXAMPLE} per step; one process trained with {value})"
        )
    shown = ctx.code(batch).strip()
    product = ctx.code(found.product).strip()
    if shown != product:
        shown = f"{shown}` (`{product}`)"
    else:
        shown += "`"
    return (
        f"the per-process batch `{shown} multiplies `{base}` by {count} (`{factor}`): every "
        "process already loads its own batch from its shard, so one step's batch is "
        f"`{base}` x N x N{numbers}; pass the per-process batch (`{base}`), or divide a "
        "global batch by the world size"
    )


def _known_value(ctx: FileContext, expr: cst.BaseExpression, at: cst.CSTNode) -> int | None:
    """An int the base holds: a literal, a name bound to one, or an option's default."""
    for value in ctx.resolver.values(expr, at):
        number = int_literal(value.expr)
        if number is not None:
            return number
    default = option_default(ctx, expr, at)
    return int_literal(default) if default is not None else None

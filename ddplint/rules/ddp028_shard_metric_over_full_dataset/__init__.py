"""DDP028: a count made over one rank's shard, divided by the size of the whole dataset."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from ddplint.context import FileContext
from ddplint.diagnostics import Severity
from ddplint.domain import domain_of
from ddplint.domain.shard_metrics import (
    ShardLoop,
    callers_keep_it,
    counted,
    division,
    escapes,
    shard_loops,
    whole_dataset,
)
from ddplint.rule import Finding, Rule, register


@register
class ShardMetricOverFullDataset(Rule):
    code = "DDP028"
    name = "shard-metric-over-full-dataset"
    severity = Severity.ERROR
    summary = "Metric counted on one rank's shard but divided by the whole dataset size"
    explanation = """
## What it does
Flags a division by the size of the whole dataset (`len(loader.dataset)`, `len(dataset)`)
of a count accumulated (`correct += ...`, `test_loss += ...`) in a loop over a DataLoader
built on a `DistributedSampler`, when nothing combines the ranks' counts: no collective
(`all_reduce`, `all_gather`, `reduce`, ...) and no helper named for one (`reduce_tensor`,
`gather_for_metrics`) runs in the function, nor, when the function returns the value, in
the functions of this file that call it. Loaders iterated through a parameter count when
every caller of the file passes a sharded one, or, for a function no code of its file
calls, when every call in the project's other modules does (a value bound only where the
job runs in one process, the `else` of `if distributed:`, aside); a loader the analysis
cannot trace is left alone. A quotient multiplied back by the world size in the same
expression (`loss / len(dataset) * world_size`: the rank's own shard mean) is left alone;
one multiplied by another value (`test_loss * args.batch_size / len(dataset)`: per-batch
means times a batch size that may be the global one) is unproven (`--preview`). The count
may be converted on the way (`correct.float() / len(dataset)`).

## Why is this bad?
A `DistributedSampler` gives each rank its own 1/N of the dataset. The count made over it
covers that shard only, while `len(loader.dataset)` is the size of the whole dataset. On
one process the two agree; on N processes each rank counts about 1/N of the samples but
divides by all of them: with 8 processes an accuracy of 64% reads about 8%, and an
averaged loss reads about 1/8 of its value. Every rank prints a different, wrong number.

## Example
```python
correct = 0
for x, y in val_loader:  # val_loader uses a DistributedSampler
    correct += (model(x).argmax(1) == y).sum().item()
print(correct / len(val_loader.dataset))
```

## Use instead
```python
counts = torch.tensor([correct, seen], device=device)
dist.all_reduce(counts)  # sum over the ranks
print((counts[0] / counts[1]).item())
```
or divide by the number of samples this rank saw, or use a metric library that
synchronises across ranks (torchmetrics).

## Fix safety
No fix is offered: combining the counts needs a tensor on the right device.

## References
- https://pytorch.org/docs/stable/data.html#torch.utils.data.distributed.DistributedSampler
- https://pytorch.org/docs/stable/distributed.html#torch.distributed.all_reduce
"""
    flag = (
        """
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

def evaluate(model, loader):
    correct = 0
    with torch.no_grad():
        for x, y in loader:
            correct += (model(x).argmax(1) == y).sum().item()
    print(f"accuracy {100.0 * correct / len(loader.dataset):.1f}%")

def main(model, test_set):
    dist.init_process_group("nccl")
    loader = DataLoader(test_set, batch_size=8, sampler=DistributedSampler(test_set, shuffle=False))
    evaluate(model, loader)
""",
        """
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

def main(model, criterion, test_set):
    dist.init_process_group("nccl")
    sampler = DistributedSampler(test_set, shuffle=False)
    loader = DataLoader(test_set, batch_size=64, sampler=sampler)
    test_loss = 0.0
    with torch.no_grad():
        for i, (x, y) in enumerate(loader):
            test_loss += criterion(model(x), y).item() * x.size(0)
    test_loss /= len(test_set)
    print(test_loss)
""",
        """
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

class Evaluator:
    def __init__(self, val_set):
        self.loader = DataLoader(val_set, sampler=DistributedSampler(val_set, shuffle=False))

    def run(self, model, log):
        hits = 0
        for x, y in self.loader:
            hits += (model(x).argmax(-1) == y).sum().item()
        log.info("accuracy %.3f", hits / len(self.loader.dataset))
""",
    )
    allow = (
        """
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

def main(model, test_set):
    dist.init_process_group("nccl")
    loader = DataLoader(test_set, batch_size=8, sampler=DistributedSampler(test_set, shuffle=False))
    correct = torch.zeros(1, device="cuda")
    with torch.no_grad():
        for x, y in loader:
            correct += (model(x).argmax(1) == y).sum()
    dist.all_reduce(correct)
    print(correct.item() / len(loader.dataset))
""",
        """
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

def main(model, test_set):
    dist.init_process_group("nccl")
    loader = DataLoader(test_set, batch_size=8, sampler=DistributedSampler(test_set, shuffle=False))
    correct = seen = 0
    with torch.no_grad():
        for x, y in loader:
            correct += (model(x).argmax(1) == y).sum().item()
            seen += y.numel()
    print(correct / seen)
""",
        """
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

def main(model, train_set, test_set):
    dist.init_process_group("nccl")
    test_loader = DataLoader(test_set, batch_size=64)  # every rank sees every sample
    correct = 0
    with torch.no_grad():
        for x, y in test_loader:
            correct += (model(x).argmax(1) == y).sum().item()
    print(correct / len(test_loader.dataset))
""",
        """
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

def train_epoch(model, criterion, train_set, rank, world_size):
    loader = DataLoader(train_set, batch_size=64, sampler=DistributedSampler(train_set))
    epoch_loss = 0.0
    for x, y in loader:
        epoch_loss += criterion(model(x), y).item() * x.size(0)
    # the rank's own shard mean: the whole size over N is what this rank saw
    print("rank %d: loss %.4f" % (rank, epoch_loss / len(train_set) * world_size))
""",
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        for shard in shard_loops(ctx):
            yield from self._divisions(ctx, shard)

    def _divisions(self, ctx: FileContext, shard: ShardLoop) -> Iterator[Finding]:
        loop, frame, loaders, counts = shard.loop, shard.frame, shard.loaders, shard.counts
        for node in ctx.nodes_within(frame, cst.BinaryOperation, cst.AugAssign):
            if ctx.scope(node) is not frame or not ctx.before(loop, node):
                continue
            if ctx.is_inside(node, loop):
                continue
            parts = division(node)
            if parts is None:
                continue
            numerator, denominator = parts
            count = counted(ctx, numerator, node, counts)
            if count is None or not whole_dataset(ctx, denominator, node, loaders, shard.parameter):
                continue
            if _rescaled(ctx, node, numerator):
                continue
            unproven = _scaled_by_value(ctx, node, numerator)
            if escapes(ctx, node, frame) and not (
                type(frame) is cst.FunctionDef and callers_keep_it(ctx, frame)
            ):
                continue
            yield Finding(
                node,
                f"`{count}` counts this rank's shard only (its loader has a "
                "DistributedSampler) but is divided by the size of the whole dataset, and "
                "nothing all_reduces it: each rank counts about 1/N of the samples but "
                "divides by all of them, so with 8 processes the value reads about 1/8 of "
                "the true one; all_reduce the count (and the number of samples) first",
                unproven=unproven,
            )


def _rescaled(ctx: FileContext, division: cst.CSTNode, numerator: cst.BaseExpression) -> bool:
    """The division is multiplied back by the world size, in the same expression: the
    quotient (`hits / len(dataset) * world_size`) or the numerator (`hits * world_size /
    len(dataset)`). The value is then the rank's own shard mean, not a fraction of it."""
    ranks = domain_of(ctx).ranks

    def scales(node: cst.CSTNode, operand: cst.CSTNode) -> bool:
        if not (type(node) is cst.BinaryOperation and type(node.operator) is cst.Multiply):
            return False
        other = node.right if operand is node.left else node.left
        return ranks.is_world_size(other, division)

    node: cst.CSTNode = division
    while type(parent := ctx.parent(node)) is cst.BinaryOperation:
        if scales(parent, node):
            return True
        node = parent
    products = [
        node
        for node in ctx.nodes_within(numerator, cst.BinaryOperation)
        if type(node) is cst.BinaryOperation
    ]
    return any(scales(p, p.left) or scales(p, p.right) for p in products)


def _scaled_by_value(
    ctx: FileContext, division: cst.CSTNode, numerator: cst.BaseExpression
) -> bool:
    """The numerator, or the quotient in the same expression, is multiplied by a value
    that is not a number written in the code (`test_loss * args.batch_size /
    len(dataset)`: a sum of per-batch means times a batch size, which may be the global
    one): what the quotient estimates is not known."""
    numeric = (cst.Integer, cst.Float)

    def by_value(node: cst.CSTNode) -> bool:
        return (
            type(node) is cst.BinaryOperation
            and type(node.operator) is cst.Multiply
            and not isinstance(node.left, numeric)
            and not isinstance(node.right, numeric)
        )

    node: cst.CSTNode = division
    while type(parent := ctx.parent(node)) is cst.BinaryOperation:
        if by_value(parent):
            return True
        node = parent
    return any(by_value(n) for n in ctx.nodes_within(numerator, cst.BinaryOperation))

"""DDP028: a count made over one rank's shard, divided by the size of the whole dataset."""

from __future__ import annotations

import re
from collections.abc import Iterator

import libcst as cst

from ddplint.context import FileContext, Scope
from ddplint.diagnostics import Severity
from ddplint.domain import domain_of
from ddplint.domain.samplers import distributed_samplers
from ddplint.domain.value_leaves import deciding_leaves
from ddplint.engine.resolve import argument
from ddplint.names import dotted
from ddplint.rule import Finding, Rule, register

# Calls wrapping the loader in the `for` (`enumerate(loader)`, `tqdm(loader, ...)`).
_WRAPPERS = frozenset({"enumerate", "tqdm", "iter", "track"})
# Helpers whose name says they combine the ranks' values (`reduce_tensor`, `all_gather`,
# `accelerator.gather_for_metrics`, `synchronize_between_processes`, `sync_dist`); not
# `torch.cuda.synchronize()`.
_COMBINES = re.compile(
    r"reduce|gather|all_?sum|between_processes|sync_(dist|across|metric|states?)",
    re.IGNORECASE,
)
_REPLICAS = 1  # DistributedSampler(dataset, num_replicas, ...)


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
every caller of the file passes a sharded one; a loader the analysis cannot trace is
left alone.

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
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        sharded: set[cst.Call] = set()
        ranks = domain_of(ctx).ranks
        for sampler in distributed_samplers(ctx):
            replicas = argument(sampler.call, _REPLICAS, "num_replicas")
            if replicas is None or ranks.is_world_size(replicas, sampler.call):
                sharded.update(loader.call for loader in sampler.loaders)
        if not sharded:
            return
        for node in ctx.nodes_of(cst.For):
            loop = node
            assert isinstance(loop, cst.For)
            loaders = self._iterated_loaders(ctx, loop, sharded)
            if loaders:
                yield from self._divisions(ctx, loop, loaders)

    @staticmethod
    def _iterated_loaders(
        ctx: FileContext, loop: cst.For, sharded: set[cst.Call]
    ) -> list[cst.Call]:
        """The sharded loaders `loop` iterates, when every value its iterable may hold is
        one; else []."""
        iterable = loop.iter
        while (
            isinstance(iterable, cst.Call)
            and iterable.args
            and (dotted(iterable.func) or "").rpartition(".")[2] in _WRAPPERS
        ):
            iterable = iterable.args[0].value
        leaves = [v.expr for v in deciding_leaves(ctx.resolver, iterable, loop)]
        if not leaves or not all(isinstance(v, cst.Call) and v in sharded for v in leaves):
            return []
        return [v for v in leaves if isinstance(v, cst.Call)]

    def _divisions(
        self, ctx: FileContext, loop: cst.For, loaders: list[cst.Call]
    ) -> Iterator[Finding]:
        frame = ctx.scope(loop)
        counts = [
            node
            for node in ctx.nodes_within(loop.body, cst.AugAssign)
            if isinstance(node, cst.AugAssign)
            and isinstance(node.operator, cst.AddAssign)
            and isinstance(node.target, cst.Name)
            and ctx.scope(node) is frame
        ]
        if not counts or _combines(ctx, frame):
            return
        for node in ctx.nodes_within(frame, cst.BinaryOperation, cst.AugAssign):
            if ctx.scope(node) is not frame or not ctx.before(loop, node):
                continue
            if ctx.is_inside(node, loop):
                continue
            parts = _division(node)
            if parts is None:
                continue
            numerator, denominator = parts
            count = _counted(ctx, numerator, node, counts)
            if count is None or not _whole_dataset(ctx, denominator, node, loaders):
                continue
            if _escapes(ctx, node, frame) and not (
                isinstance(frame, cst.FunctionDef) and _callers_keep_it(ctx, frame)
            ):
                continue
            yield Finding(
                node,
                f"`{count}` counts this rank's shard only (its loader has a "
                "DistributedSampler) but is divided by the size of the whole dataset, and "
                "nothing all_reduces it: each rank counts about 1/N of the samples but "
                "divides by all of them, so with 8 processes the value reads about 1/8 of "
                "the true one; all_reduce the count (and the number of samples) first",
            )


def _division(node: cst.CSTNode) -> tuple[cst.BaseExpression, cst.BaseExpression] | None:
    """(numerator, denominator) of `a / b` or `a /= b`."""
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Divide):
        return node.left, node.right
    if isinstance(node, cst.AugAssign) and isinstance(node.operator, cst.DivideAssign):
        return node.target, node.value
    return None


def _counted(
    ctx: FileContext, numerator: cst.BaseExpression, at: cst.CSTNode, counts: list[cst.AugAssign]
) -> str | None:
    """The name of the loop's count that `numerator` is computed from, if any."""
    for value in ctx.resolver.sources(numerator, at, depth=3):
        if not isinstance(value.expr, cst.Name):
            continue
        for binding in ctx.resolver.reaching(value.expr.value, value.at):
            if binding.kind == "augassign" and binding.statement in counts:
                return value.expr.value
    return None


def _whole_dataset(
    ctx: FileContext, denominator: cst.BaseExpression, at: cst.CSTNode, loaders: list[cst.Call]
) -> bool:
    """`denominator` is `len(...)` of the dataset of one of `loaders`: `len(loader.dataset)`,
    or `len(x)` where `x` holds the dataset the loader was built on."""
    datasets = {
        _identity(ctx, v.expr, v.at)
        for loader in loaders
        if (dataset := argument(loader, 0, "dataset")) is not None
        for v in deciding_leaves(ctx.resolver, dataset, loader)
    }
    for value in ctx.resolver.values(denominator, at):
        sized = value.expr
        if not (
            isinstance(sized, cst.Call)
            and isinstance(sized.func, cst.Name)
            and sized.func.value == "len"
            and len(sized.args) == 1
        ):
            continue
        measured = sized.args[0].value
        if isinstance(measured, cst.Attribute) and measured.attr.value == "dataset":
            held = [v.expr for v in deciding_leaves(ctx.resolver, measured.value, value.at)]
            if held and all(h in loaders for h in held):
                return True
        held_ids = [
            _identity(ctx, v.expr, v.at) for v in deciding_leaves(ctx.resolver, measured, value.at)
        ]
        if held_ids and all(h in datasets for h in held_ids):
            return True
    return False


def _identity(ctx: FileContext, expr: cst.BaseExpression, at: cst.CSTNode) -> object:
    """What a value the resolver could not follow further is: the expression itself, or
    for a name, the bindings it reads (a parameter no caller passes is the same dataset
    wherever the function reads it)."""
    if isinstance(expr, (cst.Name, cst.Attribute)):
        key = dotted(expr)
        bindings = ctx.resolver.reaching(key, at) if key is not None else []
        if bindings:
            return tuple(sorted(id(b) for b in bindings))
    return id(expr)


def _combines(ctx: FileContext, frame: Scope) -> bool:
    """Code of `frame` issues a collective or calls a helper named for combining ranks."""
    collectives = domain_of(ctx).collectives
    for call in ctx.model.calls_by_frame(frame):
        name = (dotted(call.func) or "").rpartition(".")[2]
        if _COMBINES.search(name) or collectives.issues(call):
            return True
    return False


def _escapes(ctx: FileContext, division: cst.CSTNode, frame: Scope) -> bool:
    """The result leaves the function: the division, or the name it is assigned to, is
    part of a returned value."""
    if not isinstance(frame, cst.FunctionDef):
        return False
    statement = ctx.statement(division)
    names: set[str] = set()
    if isinstance(statement, cst.Assign):
        names = {n for t in statement.targets if (n := dotted(t.target)) is not None}
    elif isinstance(statement, cst.AugAssign):
        names = {n for n in [dotted(statement.target)] if n is not None}
    for found in ctx.nodes_within(frame, cst.Return):
        returned = found.value if isinstance(found, cst.Return) else None
        if returned is None or ctx.scope(found) is not frame:
            continue
        if ctx.is_inside(division, returned) or names & set(ctx.names_in(returned)):
            return True
    return False


def _callers_keep_it(ctx: FileContext, func: cst.FunctionDef) -> bool:
    """`func` is called in this file, and none of the functions calling it combines the
    ranks' values (which could sum the returned fractions into the right one)."""
    callers = [
        call
        for call in ctx.model.calls_by_name.get(func.name.value, [])
        if func in ctx.resolver.callees(call)
    ]
    return bool(callers) and not any(_combines(ctx, ctx.scope(call)) for call in callers)

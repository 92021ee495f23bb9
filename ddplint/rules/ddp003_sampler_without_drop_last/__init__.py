"""DDP003: an evaluation DistributedSampler that pads, feeding a metric reduced across ranks."""

from __future__ import annotations

import re
from collections.abc import Iterator

import libcst as cst

from ddplint.context import FileContext
from ddplint.diagnostics import Severity
from ddplint.domain import domain_of
from ddplint.domain.ddp_facts import argument, is_false
from ddplint.domain.samplers import (
    SAMPLER_DROP_LAST,
    LoaderUse,
    SamplerUse,
    distributed_samplers,
    is_evaluation_sampler,
    shuffle_of,
)
from ddplint.names import dotted
from ddplint.rule import Finding, Rule, register

# A loop variable holding the samples' dataset indices: what code uses to place or drop the
# repeated samples (`features.index_copy_(0, index_all, ...)`).
_INDEX_NAME = re.compile(r"(^|_)(idx|idxs|index|indices|indexes)$|^sample_ids?$")

# Collectives that combine per-rank results into one metric (barriers and broadcasts do not).
_METRIC_COLLECTIVES = frozenset(
    f"torch.distributed.{name}"
    for name in (
        "all_reduce",
        "reduce",
        "all_gather",
        "all_gather_into_tensor",
        "all_gather_object",
        "gather",
        "gather_object",
    )
)

# Of those, the ones that sum the ranks' results into one value.
_SUMMING_COLLECTIVES = frozenset(f"torch.distributed.{name}" for name in ("all_reduce", "reduce"))


def _pads(call: cst.Call) -> bool:
    """The sampler keeps `drop_last=False` (absent or literally False): it pads."""
    value = argument(call, SAMPLER_DROP_LAST, "drop_last")
    return value is None or is_false(value)


def _mentions(ctx: FileContext, expr: cst.CSTNode, name: str) -> bool:
    return any(
        isinstance(node, (cst.Name, cst.Attribute)) and dotted(node) == name
        for node in ctx.walk(expr)
    )


def _loops_over(ctx: FileContext, scope: cst.CSTNode, name: str) -> list[cst.For]:
    """The `for` loops of `scope`'s own body that iterate `name` (`for b in loader`,
    `enumerate(loader)`, `tqdm(loader)`)."""
    return [
        loop
        for loop in ctx.nodes_within(scope, cst.For)
        if isinstance(loop, cst.For)
        and ctx.scope(loop) is scope
        and _mentions(ctx, loop.iter, name)
    ]


def _parameter_for(func: cst.FunctionDef, call: cst.Call, name: str) -> str | None:
    """The parameter of `func` that `call` passes `name` to."""
    params = [*func.params.posonly_params, *func.params.params]
    for index, arg in enumerate(call.args):
        if arg.star or dotted(arg.value) != name:
            continue
        if arg.keyword is not None:
            return arg.keyword.value
        if index < len(params):
            return params[index].name.value
    return None


def _reading_loops(ctx: FileContext, loader: LoaderUse) -> list[cst.For]:
    """Loops that read the loader: in the scope that builds it, or in a function of this
    file it is passed to."""
    name = loader.name
    if name is None:
        return []
    scope = ctx.scope(loader.call)
    found = _loops_over(ctx, scope, name)
    for call in ctx.calls_within(scope):
        if not ctx.before(loader.call, call):
            continue
        for func in ctx.resolver.callees(call):
            param = _parameter_for(func, call, name)
            if param is not None:
                found.extend(_loops_over(ctx, func, param))
    return found


def _metric_reduction(ctx: FileContext, loop: cst.For) -> cst.Call | None:
    """A collective combining results across ranks in the loop or after it, in its
    function, unless the function cuts the gathered results to the dataset's length
    (`[: len(dataset)]`) or the loop reads the samples' indices (`for x, index in
    loader`): either removes the padding."""
    if any(isinstance(n, cst.Name) and _INDEX_NAME.search(n.value) for n in ctx.walk(loop.target)):
        return None
    if any(
        isinstance(c.func, cst.Attribute) and c.func.attr.value == "backward"
        for c in ctx.calls_within(loop)
    ):
        return None  # a training loop: its reductions are for logging
    scope = ctx.scope(loop)
    collectives = domain_of(ctx).collectives
    found = None
    for call in ctx.calls_within(scope):
        if ctx.before(call, loop):
            continue
        inner = collectives.through(call) or call
        if collectives.qualname(inner) in _METRIC_COLLECTIVES:
            found = found or call
    if found is None or _cuts_to_length(ctx, scope):
        return None
    return found


def _cuts_to_length(ctx: FileContext, scope: cst.CSTNode) -> bool:
    for node in ctx.nodes_within(scope, cst.Slice):
        assert isinstance(node, cst.Slice)
        upper = node.upper
        if upper is not None and any(
            isinstance(n, cst.Call) and dotted(n.func) == "len" for n in ctx.walk(upper)
        ):
            return True
    return False


def _evaluation(ctx: FileContext, sampler: SamplerUse) -> bool:
    return shuffle_of(sampler.call) is False or is_evaluation_sampler(ctx, sampler)


@register
class PaddedEvaluationSampler(Rule):
    code = "DDP003"
    name = "padded-evaluation-sampler"
    severity = Severity.WARNING
    summary = "Evaluation DistributedSampler pads with repeated samples a reduced metric counts"
    explanation = """
## What it does
Flags an evaluation `DistributedSampler` (`shuffle=False`, or one that serves validation or
testing) that keeps `drop_last=False`, when a loop reading its DataLoader (in the function
that builds it, or in a function of the file it is passed to) is followed by a collective
that combines the ranks' results (`all_reduce`, `reduce`, `all_gather`, `gather`, directly
or through a function of the project). A function that cuts the gathered results back to
the dataset's length (`preds[: len(dataset)]`), or a loop that reads each sample's dataset
index (`for images, index in loader`: the indices place or drop the repeats), is left
alone.

A training sampler without `drop_last` is not reported: the padding repeats a few samples
per epoch and the last batch is short, a cost maintainers keep (at first contact with
unseen repositories these were the most frequent findings judged true but not worth a
change). A last batch of
one sample under BatchNorm would be real harm, but the dataset's length is rarely known
statically, so it is not claimed.

Proven, and reported by default, when the results are gathered per sample (`all_gather`,
`gather`): the gathered list holds more rows than the dataset and is out of line with its
order. When they are summed into one value (`all_reduce`, `reduce`), the repeats shift the
metric by at most `world_size - 1` samples, which matters only for a small set or an exact
comparison; ddplint cannot see the set's size, so that finding is unproven (shown under
`--preview`).

## Why is this bad?
When the dataset size is not a multiple of the number of processes, `DistributedSampler`
pads its index list with samples from the start so that every rank gets the same count.
For evaluation that means up to `world_size - 1` samples are evaluated twice: a metric
summed or gathered across ranks counts them twice (and counts more samples than the
dataset has), so the reported accuracy or loss differs from a one-process run of the same
model.

## Example
```python
sampler = DistributedSampler(val_set, shuffle=False)
loader = DataLoader(val_set, batch_size=256, sampler=sampler)
correct = torch.zeros(2, device=device)
for x, y in loader:
    correct += torch.stack([(model(x).argmax(1) == y).sum(), torch.tensor(len(y))])
dist.all_reduce(correct)
```

## Use instead
Gather the predictions with their dataset indices and drop the duplicates, cut the
gathered results to `len(val_set)`, or evaluate the remainder on one rank (torchvision's
reference scripts warn about the padding; `torch.utils.data` has no unpadded sampler).

## Fix safety
No fix is offered: how to remove the padded samples depends on the metric.

## References
- https://pytorch.org/docs/stable/data.html#torch.utils.data.distributed.DistributedSampler
- https://github.com/pytorch/pytorch/issues/25162
"""
    flag = (
        """
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

def evaluate(model, val_set):
    dist.init_process_group("nccl")
    sampler = DistributedSampler(val_set, shuffle=False)
    loader = DataLoader(val_set, batch_size=64, sampler=sampler)
    stats = torch.zeros(2)
    for x, y in loader:
        stats += torch.tensor([(model(x).argmax(1) == y).sum().item(), len(y)])
    dist.all_reduce(stats)
    return stats[0] / stats[1]
""",
        """
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

def run_eval(model, loader):
    preds = []
    for batch in loader:
        preds.append(model(batch))
    local = torch.cat(preds)
    gathered = [torch.zeros_like(local) for _ in range(dist.get_world_size())]
    dist.all_gather(gathered, local)
    return torch.cat(gathered)

def main(model, test_set):
    dist.init_process_group("nccl")
    sampler = DistributedSampler(test_set, shuffle=False)
    test_loader = DataLoader(test_set, batch_size=32, sampler=sampler)
    return run_eval(model, test_loader)
""",
        """
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

def reduce_sum(values):
    total = torch.tensor(values, dtype=torch.float64, device="cuda")
    dist.all_reduce(total)
    return total

def validate(model, dataset_val):
    sampler_val = DistributedSampler(dataset_val)
    data_loader_val = DataLoader(dataset_val, batch_size=128, sampler=sampler_val)
    loss_sum, count = 0.0, 0
    with torch.no_grad():
        for images, target in data_loader_val:
            loss_sum += torch.nn.functional.cross_entropy(model(images), target).item()
            count += len(target)
    loss_sum, count = reduce_sum([loss_sum, count]).tolist()
    return loss_sum / count
""",
    )
    allow = (
        """
import torch
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
from torch.utils.data import DataLoader, DistributedSampler

def predict(model, test_set):
    dist.init_process_group("nccl")
    sampler = DistributedSampler(test_set, shuffle=False)
    loader = DataLoader(test_set, batch_size=32, sampler=sampler)
    outputs = []
    for batch in loader:
        outputs.append(model(batch))
    local = torch.cat(outputs)
    gathered = [torch.zeros_like(local) for _ in range(dist.get_world_size())]
    dist.all_gather(gathered, local)
    return torch.cat(gathered)[: len(test_set)]
""",
        """
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

def evaluate(model, val_set):
    dist.init_process_group("nccl")
    sampler = DistributedSampler(val_set, shuffle=False)
    loader = DataLoader(val_set, batch_size=64, sampler=sampler)
    for x, y in loader:
        print(model(x).argmax(1).eq(y).float().mean().item())
""",
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        for sampler in distributed_samplers(ctx):
            if sampler.factory is not None or not sampler.arguments_known:
                continue  # reported where the sampler call is written
            if not _pads(sampler.call) or not _evaluation(ctx, sampler):
                continue
            for loader in sampler.loaders:
                reduction = next(
                    (
                        found
                        for loop in _reading_loops(ctx, loader)
                        if (found := _metric_reduction(ctx, loop)) is not None
                    ),
                    None,
                )
                if reduction is None:
                    continue
                what = ctx.code(reduction.func).strip()
                # Summed into a metric, the repeats shift it by at most world_size - 1
                # samples, which matters only for a small or unevenly split set: ddplint
                # cannot see the set's size, so that is unproven. Gathered per sample, the
                # results hold more rows than the dataset, out of line with its order.
                collectives = domain_of(ctx).collectives
                inner = collectives.through(reduction) or reduction
                summed = collectives.qualname(inner) in _SUMMING_COLLECTIVES
                yield Finding(
                    sampler.call,
                    "Evaluation DistributedSampler without drop_last: when the dataset size is "
                    "not a multiple of the number of processes it pads with repeated samples, "
                    f"and the results combined across ranks (`{what}(...)`) count those samples "
                    "twice; the metric differs from a one-process run. Remove the repeated samples "
                    "before combining (gather with the dataset indices, or cut gathered results "
                    "to the dataset's length)",
                    unproven=summed,
                )
                break

"""DDP003: an evaluation DistributedSampler that pads, feeding a metric reduced across ranks."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from ddplint.context import FileContext
from ddplint.diagnostics import Severity
from ddplint.domain.ddp_facts import argument, is_false, is_true
from ddplint.domain.samplers import (
    LOADER_DROP_LAST,
    SAMPLER_DROP_LAST,
    SamplerUse,
    distributed_samplers,
    is_evaluation_sampler,
    shuffle_of,
)
from ddplint.rule import Finding, Rule, register
from ddplint.rules.ddp003_sampler_without_drop_last.reads import reduction_of


def _drops_last_batch(sampler: SamplerUse) -> bool:
    """Every loader of `sampler` is a DataLoader given `drop_last=True`."""
    return bool(sampler.loaders) and all(
        loader.via == "sampler" and is_true(argument(loader.call, LOADER_DROP_LAST, "drop_last"))
        for loader in sampler.loaders
    )


def _pads(call: cst.Call) -> bool:
    """The sampler keeps `drop_last=False` (absent or literally False): it pads. Not known
    where `*args` or `**params` may carry it (`DistributedSampler(val, **params)` with
    `params = dict(..., drop_last=True)`)."""
    value = argument(call, SAMPLER_DROP_LAST, "drop_last")
    if value is None and any(arg.star for arg in call.args):
        return False
    return value is None or is_false(value)


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
testing) that keeps `drop_last=False`, when a loop reading its DataLoader is followed by a
collective that combines the ranks' results (`all_reduce`, `reduce`, `all_gather`,
`gather`, directly, through a function of this file, or through a helper of another module
handed what the loop computed). The loader is followed where it is built, into the callers
of this file that its builder returns it to (`train_loader, val_loader =
build_loaders(args)`), and into the functions of this file it is passed to; a helper of
another module that is handed the loader and issues a collective reads it out of sight.
A function that cuts the gathered results back to the dataset's length
(`preds[: len(dataset)]`), or a loop that reads each sample's dataset index (`for images,
index in loader`: the indices place or drop the repeats; `enumerate`'s batch counter is
not one), is left alone.

A training sampler without `drop_last` is not reported: the padding repeats a few samples
per epoch and the last batch is short, a cost maintainers keep (at first contact with
unseen repositories these were the most frequent findings judged true but not worth a
change). A last batch of
one sample under BatchNorm would be real harm, but the dataset's length is rarely known
statically, so it is not claimed.

Proven, and reported by default, when the results are gathered per sample (`all_gather`,
`gather`): the gathered list holds more rows than the dataset and is out of line with its
order. When they are summed into one value (`all_reduce`, `reduce`), or combined by a
helper out of sight, the repeats shift the metric by `(-len(dataset)) % N` samples with N
processes (at most N - 1, none when N divides the set's size), which matters only for a
small set or an exact comparison; ddplint cannot see the set's size, so that finding is
unproven (shown under `--preview`). So is one whose DataLoader drops its last partial batch
(`drop_last=True`): the padding lies at the end of each shard, in that batch, and counts only
where a shard fills its batches exactly.

## Why is this bad?
When the dataset size is not a multiple of the number of processes, `DistributedSampler`
pads its index list with samples from the start so that every rank gets the same count.
For evaluation that means `(-len(dataset)) % world_size` samples (up to `world_size - 1`)
are evaluated twice: a metric
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
            reduction = next(
                (r for loader in sampler.loaders if (r := reduction_of(ctx, loader)) is not None),
                None,
            )
            if reduction is None:
                continue
            what = ctx.code(reduction.call.func).strip()
            # A loader with `drop_last=True` drops each shard's last partial batch, where the
            # padding lies: the repeats count only where a shard fills its batches exactly.
            # Summed into a metric, the repeats shift it by at most world_size - 1 samples,
            # which matters only for a small or unevenly split set: ddplint cannot see the
            # set's size, so that is unproven (as is a combination out of sight). Gathered
            # per sample, the results hold more rows than the dataset, out of line with it.
            yield Finding(
                sampler.call,
                "Evaluation DistributedSampler without drop_last: it pads with repeated samples "
                "so that every rank gets the same count, `(-len(dataset)) % N` of them with N "
                "processes (up to N - 1; none when N divides the dataset size), and the "
                f"results combined across ranks (`{what}(...)`) count those samples twice, so "
                "the metric can differ from a one-process run. Remove the repeated samples "
                "before combining (gather with the dataset indices, or cut gathered results "
                "to the dataset's length)",
                unproven=not reduction.gathered or _drops_last_batch(sampler),
            )

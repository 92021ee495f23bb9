"""DDP058: a random train/validation split drawn by each rank from its own generator."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator

import libcst as cst

from ddplint.context import FileContext
from ddplint.diagnostics import Severity
from ddplint.domain.runners import every_rank
from ddplint.domain.samplers import distributed_samplers
from ddplint.engine.resolve import argument
from ddplint.project_files import project_files, project_root
from ddplint.rule import Finding, Rule, register

_RANDOM_SPLIT = frozenset(
    {"torch.utils.data.random_split", "torch.utils.data.dataset.random_split"}
)
_GENERATOR = 2  # random_split(dataset, lengths, generator)
# Code that may seed torch's global generator: its functions and the helpers projects name
# for it (`set_seed`, `seed_everything`, `init_seeds`, `setup_seed`, `fix_seeds`, ...).
_SEEDING = re.compile(
    r"manual_seed|seed_everything|set_seed|seed_all|init_seeds?\b|setup_seed|fix_seeds?\b"
    r"|random_seed|seed_torch|set_random_seed|seeding\(",
)


def _seeded_anywhere(path: str) -> bool:
    """Some Python file of the project (this one included) may seed torch: the split may
    then be the same on every rank, if every rank gets the same seed."""
    return os.path.isfile(path) and bool(project_files(project_root(path)).matching(_SEEDING))


def _sharded_by(ctx: FileContext, split: cst.Call) -> bool:
    """A DistributedSampler of this file reads a dataset computed from `split`."""
    for sampler in distributed_samplers(ctx):
        if not sampler.arguments_known:
            continue
        dataset = argument(sampler.call, 0, "dataset")
        if dataset is None:
            continue
        for value in ctx.resolver.sources(dataset, sampler.call, depth=3):
            if value.expr is split:
                return True
            if type(value.expr) is cst.Name and any(  # `train, val = random_split(...)`
                b.value is split for b in ctx.resolver.reaching(value.expr.value, value.at)
            ):
                return True
    return False


@register
class RandomSplitPerRank(Rule):
    code = "DDP058"
    name = "random-split-per-rank"
    severity = Severity.ERROR
    summary = "`random_split` without a generator on every rank: each rank splits differently"
    explanation = """
## What it does
Flags `torch.utils.data.random_split(dataset, lengths)` without a `generator` that every
rank of a distributed job runs, in a project where nothing seeds torch (no
`torch.manual_seed`, `seed_everything`, `set_seed` or a helper named for seeding in any of
its Python files). Proven where a `DistributedSampler` of the file reads one of the parts;
elsewhere (the parts handed to another module) shown under `--preview`, marked unproven.
Left alone: a split given a generator (`generator=torch.Generator().manual_seed(0)`), one
that runs on one rank or in one process, and any project that seeds torch somewhere
(whether each rank gets the same seed is not followed).

## Why is this bad?
Without a generator, `random_split` draws the permutation from torch's global generator,
which each process seeds from the operating system when nothing seeds it. Every rank then
holds its own train/validation split: the `DistributedSampler` shards a different subset on
each rank, so some samples are trained on by several ranks and others by none, and a
sample one rank trains on can be another rank's validation sample (the validation score
includes training data). On one GPU there is one split and nothing of this shows.

## Example
```python
train_set, val_set = random_split(full_set, [45000, 5000])
train_loader = DataLoader(train_set, sampler=DistributedSampler(train_set))
```

## Use instead
```python
generator = torch.Generator().manual_seed(42)  # the same on every rank
train_set, val_set = random_split(full_set, [45000, 5000], generator=generator)
```

## Fix safety
No automatic fix: the seed is the project's choice.

## References
- https://pytorch.org/docs/stable/data.html#torch.utils.data.random_split
"""
    flag = (
        """
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler, random_split

def loaders(full_set):
    dist.init_process_group("nccl")
    train_set, val_set = random_split(full_set, [0.9, 0.1])
    return DataLoader(train_set, sampler=DistributedSampler(train_set)), val_set
""",
        """
import torch.distributed as dist
import torch.utils.data as data

def main(full_set):
    dist.init_process_group("nccl")
    parts = data.random_split(full_set, [800, 200])
    sampler = data.DistributedSampler(parts[0])
    return data.DataLoader(parts[0], sampler=sampler)
""",
        """
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler, random_split

if __name__ == "__main__":
    dist.init_process_group("gloo")
    train_set, _ = random_split(list(range(100)), [80, 20])
    loader = DataLoader(train_set, sampler=DistributedSampler(train_set, shuffle=True))
""",
    )
    allow = (
        """
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler, random_split

def loaders(full_set):
    dist.init_process_group("nccl")
    generator = torch.Generator().manual_seed(0)
    train_set, val_set = random_split(full_set, [0.9, 0.1], generator=generator)
    return DataLoader(train_set, sampler=DistributedSampler(train_set)), val_set
""",
        """
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler, random_split

def loaders(full_set):
    torch.manual_seed(1234)
    dist.init_process_group("nccl")
    train_set, val_set = random_split(full_set, [0.9, 0.1])
    return DataLoader(train_set, sampler=DistributedSampler(train_set)), val_set
""",
        """
import torch.distributed as dist
from torch.utils.data import DataLoader, random_split

def loaders(full_set):
    dist.init_process_group("nccl")
    if dist.get_rank() == 0:
        train_set, _ = random_split(full_set, [0.9, 0.1])
        return DataLoader(train_set)
""",
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        splits = [
            call
            for call in ctx.calls_to(*_RANDOM_SPLIT)
            if argument(call, _GENERATOR, "generator") is None
        ]
        if not splits or _SEEDING.search(ctx.source) or _seeded_anywhere(ctx.path):
            return
        for split in splits:
            runs = every_rank(ctx, split)
            if runs is False:
                continue
            yield Finding(
                split,
                f"`{ctx.code(split).strip()}` draws its permutation from this process's own "
                "generator (no `generator=`, and nothing in the project seeds torch): each "
                "rank gets a different split, so the DistributedSampler shards different "
                "subsets and one rank's validation samples are another's training samples; "
                "pass `generator=torch.Generator().manual_seed(seed)`",
                unproven=runs is None or not _sharded_by(ctx, split),
            )

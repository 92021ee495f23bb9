"""DDP027: a shuffling DistributedSampler given a seed that differs between ranks."""

from __future__ import annotations

from collections.abc import Iterator

from ddplint.context import FileContext
from ddplint.diagnostics import Severity
from ddplint.domain import domain_of
from ddplint.domain.apis import SAMPLER_CLASSES
from ddplint.domain.rank_values import differs_by_rank
from ddplint.domain.samplers import shuffle_of
from ddplint.engine.resolve import argument
from ddplint.rule import Finding, Rule, register

_SEED = 4  # DistributedSampler(dataset, num_replicas, rank, shuffle, seed, drop_last)
_REPLICAS = 1


@register
class SamplerSeedPerRank(Rule):
    code = "DDP027"
    name = "sampler-seed-per-rank"
    severity = Severity.ERROR
    summary = "DistributedSampler seeded per rank: the shards overlap and samples are skipped"
    explanation = """
## What it does
Flags the `seed=` of a shuffling `DistributedSampler` when its value is computed from this
process's rank: `seed=base + rank`, `seed=args.seed + dist.get_rank()`, or a name assigned
such a value (a per-rank seed made for augmentation and then handed to the sampler as
well). The value must be proven to depend on the rank: a name is decided by what it is
assigned, not by what it is called. Samplers with `shuffle=False` are not flagged (they
do not use the seed), nor samplers whose `num_replicas` is not the world size.

## Why is this bad?
Every rank of a `DistributedSampler` shuffles the whole dataset with the same generator,
seeded with `seed + epoch`, and then takes every N-th index of that one permutation
(`indices[rank::num_replicas]`). The shards are disjoint only because the permutation is
the same on every rank. With a different seed per rank, each rank takes its share of a
different permutation: the shards overlap, and a sample lands in no shard with probability
(1 - 1/N)^N: 25% of the dataset with 2 processes, 34% with 8, about 37% (1/e) beyond. On
one process every sample is seen once per epoch; on N processes about a third of them are
never seen in an epoch while others are seen two or three times.

## Example
```python
seed = args.seed + dist.get_rank()
torch.manual_seed(seed)
sampler = DistributedSampler(train_set, shuffle=True, seed=seed)
```

## Use instead
```python
torch.manual_seed(args.seed + dist.get_rank())  # per-rank augmentation is fine
sampler = DistributedSampler(train_set, shuffle=True, seed=args.seed)
```

## Fix safety
No fix is offered: the seed the ranks should share (the base seed) is the author's choice.

## References
- https://pytorch.org/docs/stable/data.html#torch.utils.data.distributed.DistributedSampler
- https://github.com/pytorch/pytorch/blob/main/torch/utils/data/distributed.py
"""
    flag = (
        """
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

def main(args, train_set):
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    sampler = DistributedSampler(train_set, shuffle=True, seed=args.seed + rank, drop_last=True)
    return DataLoader(train_set, batch_size=32, sampler=sampler)
""",
        """
import os
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

def build(train_set, base_seed):
    seed = base_seed + int(os.environ["LOCAL_RANK"])
    torch.manual_seed(seed)
    sampler = DistributedSampler(train_set, seed=seed, drop_last=True)
    return DataLoader(train_set, batch_size=32, sampler=sampler)
""",
        """
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.utils.data import DistributedSampler

def worker(rank, world_size, dataset):
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    sampler = DistributedSampler(dataset, num_replicas=world_size, rank=rank, seed=rank)

if __name__ == "__main__":
    mp.spawn(worker, args=(4, None), nprocs=4)
""",
    )
    allow = (
        """
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

def main(args, train_set):
    dist.init_process_group("nccl")
    torch.manual_seed(args.seed + dist.get_rank())
    sampler = DistributedSampler(train_set, shuffle=True, seed=args.seed, drop_last=True)
    return DataLoader(train_set, batch_size=32, sampler=sampler)
""",
        """
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

def main(val_set):
    dist.init_process_group("nccl")
    rank = 0  # a name is not a value: this seed is the same on every rank
    sampler = DistributedSampler(val_set, shuffle=True, seed=1234 + rank, drop_last=True)
    return DataLoader(val_set, batch_size=32, sampler=sampler)
""",
        """
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

def main(val_set, seed):
    dist.init_process_group("nccl")
    sampler = DistributedSampler(val_set, shuffle=False, seed=seed + dist.get_rank())
    return DataLoader(val_set, batch_size=32, sampler=sampler)
""",
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        ranks = domain_of(ctx).ranks
        for call in ctx.calls_to(*SAMPLER_CLASSES):
            seed = argument(call, _SEED, "seed")
            if seed is None or shuffle_of(call) is not True:
                continue
            replicas = argument(call, _REPLICAS, "num_replicas")
            if replicas is not None and not ranks.is_world_size(replicas, call):
                continue  # one sampler per group of ranks, or per process: not the job's split
            if not differs_by_rank(ranks, seed, call):
                continue
            yield Finding(
                seed,
                f"DistributedSampler seeded per rank (`seed={ctx.code(seed)}`): each rank "
                "takes its share of a different permutation, so the shards overlap and a "
                "fraction (1 - 1/N)^N of the samples is seen by no rank in an epoch (25% with "
                "2 processes, 34% with 8); give every rank the same seed",
            )

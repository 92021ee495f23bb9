"""DDP027: a shuffling DistributedSampler given a seed that differs between ranks."""

from __future__ import annotations

from collections.abc import Iterator

from ddplint.context import FileContext
from ddplint.diagnostics import Severity
from ddplint.domain import domain_of
from ddplint.domain.apis import SAMPLER_CLASSES
from ddplint.domain.dataset_orders import unseeded_shuffles
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
    summary = (
        "Ranks order the data differently before it is sharded (a DistributedSampler seeded "
        "per rank, a dataset shuffled without a seed): the shards overlap"
    )
    explanation = """
## What it does
Flags the `seed=` of a shuffling `DistributedSampler` when its value is computed from this
process's rank: `seed=base + rank`, `seed=args.seed + dist.get_rank()`, or a name assigned
such a value (a per-rank seed made for augmentation and then handed to the sampler as
well). The value must be proven to depend on the rank: a name is decided by what it is
assigned, not by what it is called; a parameter by what the calls pass for it, in other
project modules too (`define_loaders(..., local_rank=local_rank)` in `train.py` for `def
define_loaders(..., local_rank=0)` in `loaders.py`). Samplers with `shuffle=False` are
not flagged (they do not use the seed), nor samplers whose `num_replicas` is not the world
size.

It also flags `.shuffle()` without a `seed=` on a Hugging Face `datasets` object (one
made by `load_dataset`, `load_from_disk`, `Dataset.from_*`, through its methods and
subscripts; not a streaming one) that every process runs, in a file that shards the rows
by index (a `DistributedSampler`, or a transformers / TRL `Trainer`, which gives each
process its share of the indices) and seeds no generator (no `np.random.seed`, library
`set_seed` or helper named for seeding, no `Trainer` built before the shuffle).

## Why is this bad?
Every rank of a `DistributedSampler` shuffles the whole dataset with the same generator,
seeded with `seed + epoch`, and then takes every N-th index of that one permutation
(`indices[rank::num_replicas]`). The shards are disjoint only because the permutation is
the same on every rank. With a different seed per rank, each rank takes its share of a
different permutation: the shards overlap, and a sample lands in no shard with probability
(1 - 1/N)^N: 25% of the dataset with 2 processes, 34% with 8, about 37% (1/e) beyond. On
one process every sample is seen once per epoch; on N processes about a third of them are
never seen in an epoch while others are seen two or three times.

`datasets`' `Dataset.shuffle()` without a seed takes its seed from NumPy's global
generator, which, unless the script seeds it, starts from fresh OS entropy in each
process: the N processes hold the rows in N different orders, and the sampler's index
shares of those different lists overlap in the same way.

## Example
```python
seed = args.seed + dist.get_rank()
torch.manual_seed(seed)
sampler = DistributedSampler(train_set, shuffle=True, seed=seed)
```

```python
train_data = load_dataset("json", data_files=path)["train"].shuffle().map(tokenize)
trainer = Trainer(model=model, args=training_args, train_dataset=train_data)
```

## Use instead
```python
torch.manual_seed(args.seed + dist.get_rank())  # per-rank augmentation is fine
sampler = DistributedSampler(train_set, shuffle=True, seed=args.seed)
```

```python
train_data = load_dataset("json", data_files=path)["train"].shuffle(seed=42).map(tokenize)
trainer = Trainer(model=model, args=training_args, train_dataset=train_data)
```

## Fix safety
No fix is offered: the seed the ranks should share (the base seed) is the author's choice.
A fixed seed for a dataset shuffle changes what one process draws as well.

## References
- https://huggingface.co/docs/datasets/package_reference/main_classes#datasets.Dataset.shuffle
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
        for call in unseeded_shuffles(ctx):
            yield Finding(
                call,
                f"`{ctx.code(call)}` shuffles the dataset without a seed in every process: "
                "`datasets` then seeds the permutation from NumPy's global generator, which "
                "nothing in this file seeds, so it starts from fresh OS entropy in each "
                "process: the N processes hold the rows in N different orders, and the index "
                "shares the sampler gives them overlap: "
                "in each pass over the data a fraction (1 - 1/N)^N of the rows is used by "
                "no process (25% with 2 processes, 34% with 8) and others by several; on one "
                "process every row is used once; pass `seed=` (the same on every process)",
            )

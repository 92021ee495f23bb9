"""DDP019: DistributedSampler given the local rank, or num_replicas from device_count()."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from ddplint.context import FileContext
from ddplint.diagnostics import Applicability, Severity
from ddplint.domain import domain_of
from ddplint.domain.ddp_facts import SAMPLER_CLASSES, passed_argument
from ddplint.domain.device_ranks import single_node_group
from ddplint.domain.devices import is_device_count
from ddplint.domain.rank_kinds import RankKind
from ddplint.rule import Finding, FixSpec, Rule, register


def _without(call: cst.Call, arg: cst.Arg) -> cst.Call:
    """`call` without the keyword argument `arg`."""
    args = list(call.args)
    index = next(i for i, a in enumerate(args) if a is arg)
    del args[index]
    if index == len(args) and args:
        args[-1] = args[-1].with_changes(comma=arg.comma)
    return call.with_changes(args=args)


def _drop_fix(call: cst.Call, arg: cst.Arg, what: str) -> FixSpec:
    if arg.keyword is not None:
        return FixSpec(
            f"Remove `{what}=` (the default is taken from the process group)",
            replacements=((call, _without(call, arg)),),
            applicability=Applicability.UNSAFE,
        )
    return FixSpec(
        f"Pass `None` for `{what}` (the default is taken from the process group)",
        replacements=((arg.value, "None"),),
        applicability=Applicability.UNSAFE,
    )


@register
class SamplerLocalRank(Rule):
    code = "DDP019"
    name = "sampler-local-rank"
    severity = Severity.ERROR
    # opt-in: first contact, fresh103 to fresh179 (bench/realworld/first_contact.py): 44 / 0 / 73;
    # the harm needs more than one node, which the judged projects' launches seldom use
    default = False
    summary = "DistributedSampler sharded by the local rank or by the GPU count of one node"
    explanation = """
## What it does
Flags a `DistributedSampler` given `rank=` the *local* rank (`LOCAL_RANK`,
`args.local_rank`, `local_rank`, `rank % torch.cuda.device_count()`) or `num_replicas=`
the GPU count of one node (`torch.cuda.device_count()`).

## Why is this bad?
The sampler splits the dataset into `num_replicas` shards and gives shard `rank` to this
process. It must use the global rank and the world size. With the local rank, every node
reads the same shards: on two nodes each sample is seen twice per epoch and half the data
is never used. With `num_replicas=torch.cuda.device_count()` on two 8-GPU nodes the
dataset is cut into 8 shards for 16 processes: the sampler raises
`ValueError: Invalid rank 8, rank should be in the interval [0, 7]` on the second node
when given the global rank (the default), and duplicates the first node's shards when
given the local rank. On a single node nothing goes wrong, which is why this survives
testing.

Not flagged: `rank=dist.get_rank()`, a global `rank`, `num_replicas=world_size`, and
scripts whose process group itself is created with the local rank or with
`world_size=torch.cuda.device_count()` (single node by construction).

## Example
```python
sampler = DistributedSampler(train_set, num_replicas=torch.cuda.device_count(),
                             rank=local_rank)
```

## Use instead
```python
sampler = DistributedSampler(train_set)  # world size and global rank of the group
# or explicitly:
sampler = DistributedSampler(train_set, num_replicas=dist.get_world_size(),
                             rank=dist.get_rank())
```

## Fix safety
The fix removes the argument, so the sampler takes the world size and the rank from the
default process group. It is unsafe: the sampler must then be built after
`init_process_group`, and a script sharding over a sub-group must pass that group's values.

## References
- https://pytorch.org/docs/stable/data.html#torch.utils.data.distributed.DistributedSampler
- https://pytorch.org/docs/stable/elastic/run.html (RANK, LOCAL_RANK, WORLD_SIZE)
"""
    fixable = Applicability.UNSAFE
    flag = (
        """import os
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

local_rank = int(os.environ["LOCAL_RANK"])
dist.init_process_group("nccl")
sampler = DistributedSampler(train_set, rank=local_rank, drop_last=True)
""",
        """import torch
import torch.distributed as dist
from torch.utils.data.distributed import DistributedSampler

dist.init_process_group("nccl")
sampler = DistributedSampler(train_set, num_replicas=torch.cuda.device_count(),
                             rank=dist.get_rank())
""",
        """import argparse
import torch.distributed as dist
from torch.utils.data import DistributedSampler

parser = argparse.ArgumentParser()
parser.add_argument("--local-rank", type=int, default=0)
args = parser.parse_args()
dist.init_process_group("nccl")
sampler = DistributedSampler(train_set, dist.get_world_size(), args.local_rank)
""",
    )
    allow = (
        """import os
import torch.distributed as dist
from torch.utils.data import DistributedSampler

dist.init_process_group("nccl")
rank = dist.get_rank()
world_size = dist.get_world_size()
sampler = DistributedSampler(train_set, num_replicas=world_size, rank=rank)
""",
        """import os
import torch.distributed as dist
from torch.utils.data import DistributedSampler

rank = int(os.environ["RANK"])
local_rank = int(os.environ["LOCAL_RANK"])
dist.init_process_group("nccl")
sampler = DistributedSampler(train_set, rank=rank, shuffle=True)
""",
        """import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.utils.data import DistributedSampler

def worker(local_rank):
    ngpus = torch.cuda.device_count()
    dist.init_process_group("nccl", rank=local_rank, world_size=ngpus)
    sampler = DistributedSampler(train_set, num_replicas=ngpus, rank=local_rank)

if __name__ == "__main__":
    mp.spawn(worker, nprocs=torch.cuda.device_count())
""",
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        samplers = list(ctx.calls_to(*SAMPLER_CLASSES))
        if not samplers:
            return
        local_group, one_node_group = single_node_group(ctx)
        kinds = domain_of(ctx).rank_kinds
        for call in samplers:
            rank = passed_argument(call, 2, "rank")
            local = rank is not None and kinds.kind(rank.value, call) is RankKind.LOCAL
            if rank is not None and local and not local_group:
                yield Finding(
                    rank,
                    f"DistributedSampler given the local rank (`{ctx.code(rank.value)}`): "
                    "on more than one node every node reads the same shards (duplicated "
                    "samples, part of the data never used). Pass the global rank or omit it",
                    fix=_drop_fix(call, rank, "rank"),
                )
            replicas = passed_argument(call, 1, "num_replicas")
            if replicas is not None and not one_node_group and is_device_count(ctx, replicas.value):
                yield Finding(
                    replicas,
                    "DistributedSampler `num_replicas` is the GPU count of one node "
                    f"(`{ctx.code(replicas.value)}`): on more than one node it is smaller than "
                    "the world size, so ranks past it fail with 'Invalid rank' (or, with "
                    "local ranks, the nodes read the same shards). Use the world size or "
                    "omit it",
                    fix=_drop_fix(call, replicas, "num_replicas"),
                )

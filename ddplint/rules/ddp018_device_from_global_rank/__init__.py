"""DDP018: the CUDA device chosen from the global rank instead of the local rank."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from ddplint.context import FileContext
from ddplint.diagnostics import Severity
from ddplint.domain.device_ranks import device_kind, single_node_group
from ddplint.domain.devices import device_arguments
from ddplint.domain.node_counts import runs_on_several_nodes
from ddplint.domain.project_view import project_of
from ddplint.domain.rank_kinds import LOCAL_RANK_NAME, RankKind
from ddplint.domain.ranks import int_literal, last_name
from ddplint.domain.rendezvous_address import meets_on_this_machine
from ddplint.domain.runners import one_process
from ddplint.domain.test_modules import is_test_module
from ddplint.rule import Finding, Rule, register


@register
class DeviceFromGlobalRank(Rule):
    code = "DDP018"
    name = "device-from-global-rank"
    severity = Severity.ERROR
    # opt-in: first contact, fresh103 to fresh141 (bench/realworld/first_contact.py): 0 / 0 / 4
    default = False
    summary = "CUDA device chosen from the global rank instead of the local rank"
    explanation = """
## What it does
Flags a CUDA device chosen from the *global* rank (`dist.get_rank()`,
`os.environ["RANK"]`, `args.rank`, or a name bound to them): `torch.cuda.set_device(rank)`,
`torch.device(f"cuda:{rank}")`, `torch.device("cuda", rank)`, `.to(rank)`, `.cuda(rank)`,
`DDP(model, device_ids=[rank])`.

## Why is this bad?
The global rank numbers every process of the job; GPU indices restart at 0 on every node.
On one node both agree, so the script works in testing. On the second node of an 8-GPU job
the ranks are 8 to 15: `cuda:8` does not exist and CUDA raises "invalid device ordinal"
(or, with fewer processes than GPUs per node, processes pick the wrong GPU and may share
one). The local rank (`LOCAL_RANK`, set by torchrun) is the GPU index on the node.

A name for the local rank that holds the global rank (`local_rank = dist.get_rank()`,
or `os.environ["RANK"]`) is the global rank: the value decides, not the name.

The harm needs a second node, so the finding is proven only where
the script shows it runs on more than one: it or a module it imports offers a node
option (`--nnodes`, `--num_nodes`, `--node_rank`, ...) or reads a node's number or the
node count from the environment (`NODE_RANK`, `SLURM_NODEID`, `SLURM_NNODES`, ...), or a
command of the project launches several nodes (`torchrun --nnodes=2`, `--node_rank`,
`#SBATCH --nodes=4`). An option offered counts only where the project's commands do not
all launch one node (`torchrun --nnodes=1`, or without `--nnodes`; `#SBATCH --nodes=1`).
A pytest test module runs under its test runner: only its own text and the commands
naming it count there, not the library code it imports nor the project's training jobs.
Elsewhere it is shown under `--preview` only.

Not flagged: local-rank values (`LOCAL_RANK`, `args.local_rank`, `local_rank`),
`rank % torch.cuda.device_count()`, the rank parameter of an `mp.spawn` worker, which is
the process index on one node, code that runs in one process (a test whose process
group has one rank: its rank is 0), and a device chosen under a test that fixes the rank
to 0 (`if rank == 0: model.cuda(rank)`: global rank 0 is the first node's local rank 0).

## Example
```python
rank = dist.get_rank()
torch.cuda.set_device(rank)
model = DDP(model.to(rank), device_ids=[rank])
```

## Use instead
```python
local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
model = DDP(model.to(local_rank), device_ids=[local_rank])
```

## Fix safety
No automatic fix: the right local-rank variable depends on the launcher.

## References
- https://pytorch.org/docs/stable/elastic/run.html (environment variables set by torchrun)
- https://pytorch.org/tutorials/intermediate/ddp_tutorial.html
"""
    flag = (
        """import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("nccl")
rank = dist.get_rank()
torch.cuda.set_device(rank)
model = DDP(torch.nn.Linear(4, 4).cuda(), device_ids=[rank])
""",
        """import os
import torch
import torch.distributed as dist

def main():
    rank = int(os.environ["RANK"])
    dist.init_process_group("nccl")
    device = torch.device(f"cuda:{rank}")
    return torch.nn.Linear(2, 2).to(device)
""",
        """import argparse
import torch
import torch.distributed as dist
from torch import nn

parser = argparse.ArgumentParser()
parser.add_argument("--rank", type=int, default=0)
args = parser.parse_args()
dist.init_process_group("nccl", rank=args.rank)
model = nn.parallel.DistributedDataParallel(nn.Linear(2, 2).cuda(args.rank))
""",
    )
    allow = (
        """import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
dist.init_process_group("nccl")
rank = dist.get_rank()
model = DDP(torch.nn.Linear(4, 4).cuda(local_rank), device_ids=[local_rank])
""",
        """import torch
import torch.distributed as dist

dist.init_process_group("nccl")
rank = dist.get_rank()
device = rank % torch.cuda.device_count()
torch.cuda.set_device(device)
""",
        """import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP

def worker(rank, world_size):
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    torch.cuda.set_device(rank)
    model = DDP(torch.nn.Linear(4, 4).to(rank), device_ids=[rank])
    dist.destroy_process_group()

if __name__ == "__main__":
    world_size = torch.cuda.device_count()
    mp.spawn(worker, args=(world_size,), nprocs=world_size)
""",
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        if any(single_node_group(ctx)) or meets_on_this_machine(ctx):
            return  # the processes of one node: the global rank is the local one
        several: bool | None = None
        for call in ctx.calls:
            if not call.args:
                continue
            for value in device_arguments(ctx, call):
                if device_kind(ctx, value, call) is RankKind.GLOBAL:
                    if one_process(ctx, call) or _zero_here(ctx, value, call):
                        break
                    named = LOCAL_RANK_NAME.match(last_name(value) or "") is not None
                    held = ", which holds the global rank despite its name" if named else ""
                    if several is None:
                        several = _runs_on_several_nodes(ctx)
                    yield Finding(
                        call,
                        f"device chosen from the global rank (`{ctx.code(value)}`{held}): right "
                        "only on a single node; on other nodes the global rank exceeds the GPU "
                        "count (invalid device ordinal) or names the wrong GPU. Use the local "
                        "rank (LOCAL_RANK)",
                        unproven=not several,
                    )
                    break


def _zero_here(ctx: FileContext, value: cst.BaseExpression, call: cst.Call) -> bool:
    """A condition `call` runs under fixes `value` to 0 (`model.cuda(rank)` under `if rank
    == 0:`): the global rank 0 is local rank 0 of the first node, GPU 0 is its own."""
    shown = ctx.code(value).strip()
    for condition in ctx.flow.conditions(call):
        for term, holds in condition.terms():
            if (
                type(term) is cst.Comparison
                and len(term.comparisons) == 1
                and ctx.code(term.left).strip() == shown
                and int_literal(term.comparisons[0].comparator) == 0
                and type(term.comparisons[0].operator) is (cst.Equal if holds else cst.NotEqual)
            ):
                return True
    return False


def _runs_on_several_nodes(ctx: FileContext) -> bool:
    project = project_of(ctx)
    imported = project.text_closure(ctx.path) if project is not None else ()
    return runs_on_several_nodes(ctx.path, ctx.source, imported, is_test_module(ctx))

"""DDP016: DistributedDataParallel(find_unused_parameters=True)."""

from __future__ import annotations

from collections.abc import Iterator

from ddplint.context import FileContext
from ddplint.diagnostics import Severity
from ddplint.domain.ddp_facts import DDP_CLASSES, keyword
from ddplint.engine.constants import certainly_true
from ddplint.rule import Finding, Rule, register


@register
class FindUnusedParameters(Rule):
    code = "DDP016"
    name = "find-unused-parameters"
    severity = Severity.INFO
    default = False  # opt-in: first contact (fresh7 + fresh8): 0 true / 1 false / 13 debatable
    summary = "find_unused_parameters=True makes DDP traverse the autograd graph every step"
    explanation = """
## What it does
Reports `DistributedDataParallel(..., find_unused_parameters=True)` when the value is the
constant `True` (a command-line flag or config value is left alone).

## Why is this bad?
With `find_unused_parameters=True`, DDP walks the autograd graph from the outputs after
every forward pass to mark the parameters that will get no gradient, so that their buckets
can still be reduced. That traversal costs time every iteration, and it is often switched
on "just in case" after copying an example.

It *is* needed when some parameters take no part in a forward pass (branches, skipped
layers, frozen heads that still require grad, multi-task models): without it DDP raises an
error at the next iteration saying that it expected to reduce parameters that got no
gradient. So keep it when you need it; this is a hint, not a bug.

## Example
```python
model = DDP(model, device_ids=[local_rank], find_unused_parameters=True)
```

## Use instead
```python
# the default, when every parameter takes part in every forward pass
model = DDP(model, device_ids=[local_rank])
# if the set of used parameters is the same in every iteration:
model = DDP(model, device_ids=[local_rank], static_graph=True)
```
To find out whether (and which) parameters are unused, run once with
`TORCH_DISTRIBUTED_DEBUG=INFO` (or `DETAIL`): DDP then names the parameters that got no
gradient in its error message.

## Fix safety
No automatic fix: whether the model has unused parameters is only known at run time.

## References
- https://pytorch.org/docs/stable/generated/torch.nn.parallel.DistributedDataParallel.html
- https://pytorch.org/docs/stable/notes/ddp.html
"""
    flag = (
        """import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
dist.init_process_group("nccl")
model = DDP(torch.nn.Linear(4, 4).cuda(), find_unused_parameters=True)
""",
        """import os
import torch
import torch.distributed as dist
from torch import nn

local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
dist.init_process_group("nccl")
net = nn.parallel.DistributedDataParallel(
    nn.Linear(4, 4).cuda(),
    device_ids=[local_rank],
    find_unused_parameters=True,
)
""",
        """import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as Wrap

def wrap(model, local_rank):
    unused = True
    return Wrap(model, device_ids=[local_rank], find_unused_parameters=unused)
""",
    )
    allow = (
        """import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def wrap(model, local_rank):
    return DDP(model, device_ids=[local_rank], find_unused_parameters=False)
""",
        """import argparse
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

parser = argparse.ArgumentParser()
parser.add_argument("--find-unused", action="store_true")
args = parser.parse_args()

def wrap(model, local_rank):
    return DDP(model, device_ids=[local_rank], find_unused_parameters=args.find_unused)
""",
        """import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def wrap(model, local_rank, cfg):
    unused = False
    if cfg.model.multi_task:
        unused = True
    return DDP(model, device_ids=[local_rank], static_graph=True,
               find_unused_parameters=unused)
""",
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        for call in ctx.calls_to(*DDP_CLASSES):
            arg = keyword(call, "find_unused_parameters")
            if arg is not None and certainly_true(ctx.resolver, arg.value, call):
                yield Finding(
                    arg,
                    "find_unused_parameters=True: DDP traverses the autograd graph after "
                    "every forward pass, which costs time each step. ddplint cannot tell "
                    "whether this model has parameters that skip the forward: if some do, "
                    "keep it (DDP raises an error without it); if none do, drop it "
                    "(TORCH_DISTRIBUTED_DEBUG=INFO names the parameters that got no gradient)",
                )

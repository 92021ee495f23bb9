"""DDP004: an optimizer built from a module's parameters before FSDP shards the module."""

from __future__ import annotations

from collections.abc import Iterator

from ddplint.context import FileContext
from ddplint.diagnostics import Severity
from ddplint.rule import Finding, Rule, register
from ddplint.rules.ddp004_optimizer_before_wrap.early_optimizers import optimizers_before_wrap

# Wrappers that replace the module's parameters: FSDP's flat parameters (`use_orig_params`
# or not, the docs require the optimizer after the wrap) and FSDP2's DTensor parameters.
SHARDING_WRAPS = (
    "torch.distributed.fsdp.FullyShardedDataParallel",
    "torch.distributed.fsdp.fully_sharded_data_parallel.FullyShardedDataParallel",
    "torch.distributed.fsdp.fully_shard",
    "torch.distributed._composable.fsdp.fully_shard",
    "torch.distributed._composable.fsdp.fully_shard.fully_shard",
)


@register
class OptimizerBeforeWrap(Rule):
    code = "DDP004"
    name = "optimizer-before-wrap"
    severity = Severity.ERROR
    summary = "Optimizer built from a module's parameters before FSDP shards the module"
    explanation = """
## What it does
Flags an optimizer constructed from the parameters of a module that is sharded by
`FullyShardedDataParallel` or `fully_shard` only afterwards (`opt =
AdamW(model.parameters())` followed by `model = FSDP(model)`), including an optimizer built
by a helper that receives the module (`build_optimizer(model)`).

An optimizer built before a `DistributedDataParallel` wrap is left alone: DDP keeps the
module's own `Parameter` objects, so the optimizer updates the parameters the wrapper uses
(the maintainers say either order is fine, pytorch#59147). Reporting that order cried wolf:
at first contact with unseen repositories such findings were judged true but not worth a
change.

## Why is this bad?
FSDP replaces the module's parameters: `FullyShardedDataParallel` with flat parameters that
hold this rank's shard, `fully_shard` with DTensor parameters. The optimizer built before
holds the old tensors: `step()` updates tensors the model no longer uses, so training does
not train (or fails on the first step). The FSDP documentation says the optimizer must be
built after the wrap.

## Example
```python
model = Net().cuda(local_rank)
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
model = FSDP(model, device_id=local_rank)
```

## Use instead
```python
model = Net().cuda(local_rank)
model = FSDP(model, device_id=local_rank)
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
```

## Fix safety
No fix is offered: moving statements across the wrap may change other code in between.

## References
- https://pytorch.org/docs/stable/fsdp.html
- https://github.com/pytorch/pytorch/issues/59147
"""
    flag = (
        """
import os
import torch
import torch.distributed as dist
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

local_rank = int(os.environ["LOCAL_RANK"])
dist.init_process_group("nccl")
model = torch.nn.Linear(8, 2).cuda(local_rank)
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
model = FSDP(model, device_id=local_rank)
""",
        """
import torch
import torch.distributed as dist
from torch.distributed.fsdp import fully_shard

def setup(net):
    dist.init_process_group("nccl")
    opt = torch.optim.SGD(net.parameters(), lr=1e-2, momentum=0.9)
    for block in net.blocks:
        fully_shard(block)
    fully_shard(net)
    return net, opt
""",
        """
import torch
import torch.distributed as dist
from torch.distributed.fsdp import FullyShardedDataParallel

def build_optimizer(model, lr):
    decay = [p for n, p in model.named_parameters() if not n.endswith("bias")]
    return torch.optim.AdamW([{"params": decay, "weight_decay": 0.05}], lr=lr)

def main(model, local_rank):
    dist.init_process_group("nccl")
    optimizer = build_optimizer(model, 1e-3)
    model = FullyShardedDataParallel(model, device_id=local_rank)
""",
    )
    allow = (
        """
import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

local_rank = int(os.environ["LOCAL_RANK"])
dist.init_process_group("nccl")
model = torch.nn.Linear(8, 2).cuda(local_rank)
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
model = DDP(model, device_ids=[local_rank])
""",
        """
import os
import torch
import torch.distributed as dist
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

local_rank = int(os.environ["LOCAL_RANK"])
dist.init_process_group("nccl")
model = FSDP(torch.nn.Linear(8, 2).cuda(local_rank), device_id=local_rank)
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
""",
        """
import torch
import torch.distributed as dist
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

def main(model, teacher, local_rank):
    dist.init_process_group("nccl")
    teacher_opt = torch.optim.SGD(teacher.parameters(), lr=0.1)
    model = FSDP(model, device_id=local_rank)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
""",
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        reported = set()
        for wrap in ctx.calls_to(*SHARDING_WRAPS):
            for call, module in optimizers_before_wrap(ctx, wrap):
                if call in reported:
                    continue
                reported.add(call)
                yield Finding(
                    call,
                    f"Optimizer built from the parameters of `{module}` before FSDP shards it: "
                    "the wrap replaces the module's parameters, so this optimizer updates "
                    "tensors the model no longer uses; build the optimizer after the wrap",
                )

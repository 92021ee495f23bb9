"""DDP004: an optimizer built from a module's parameters before the module is wrapped."""

from __future__ import annotations

from collections.abc import Iterator

from ddplint.analysis.early_optimizers import optimizers_before_wrap
from ddplint.context import FileContext
from ddplint.diagnostics import Severity
from ddplint.rule import Finding, Rule, register


@register
class OptimizerBeforeWrap(Rule):
    code = "DDP004"
    name = "optimizer-before-wrap"
    severity = Severity.INFO
    summary = "Optimizer built from a module's parameters before the module is wrapped"
    explanation = """
## What it does
Flags an optimizer constructed from the parameters of a module that is wrapped in
`DistributedDataParallel` only afterwards (`opt = AdamW(model.parameters())` followed by
`model = DDP(model)`), including an optimizer built by a helper that receives the module
(`build_optimizer(model)`). A scheduler built from that optimizer is covered by the same
finding.

## Why is this bad?
With DDP this order is harmless: DDP keeps the module's own `Parameter` objects, so the
optimizer updates the parameters the wrapper uses (the maintainers say either order is fine,
pytorch#59147). It becomes a real bug when the wrapper is swapped for
`FullyShardedDataParallel`, which replaces the parameters with flattened shards: an
optimizer built before the wrap then updates tensors the model no longer uses. Building the
optimizer after the wrap works for every wrapper, hence the low severity.

## Example
```python
model = Net().cuda(local_rank)
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
model = DDP(model, device_ids=[local_rank])
```

## Use instead
```python
model = Net().cuda(local_rank)
model = DDP(model, device_ids=[local_rank])
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
```

## Fix safety
No fix is offered: moving statements across the wrap may change other code in between.

## References
- https://github.com/pytorch/pytorch/issues/59147
- https://pytorch.org/docs/stable/fsdp.html
"""
    flag = (
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
import torch
import torch.distributed as dist
from torch import nn, optim

def setup(net, local_rank):
    dist.init_process_group("nccl")
    groups = [{"params": net.backbone.parameters(), "lr": 1e-4}, {"params": net.head.parameters()}]
    opt = optim.SGD(groups, lr=1e-2, momentum=0.9)
    sched = optim.lr_scheduler.CosineAnnealingLR(opt, T_max=90)
    net = nn.parallel.DistributedDataParallel(net.to(local_rank), device_ids=[local_rank])
    return net, opt, sched
""",
        """
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as Wrap

def build_optimizer(model, lr):
    decay = [p for n, p in model.named_parameters() if not n.endswith("bias")]
    return torch.optim.AdamW([{"params": decay, "weight_decay": 0.05}], lr=lr)

def main(model, local_rank):
    dist.init_process_group("nccl")
    optimizer = build_optimizer(model, 1e-3)
    model = Wrap(model, device_ids=[local_rank])
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
model = DDP(model, device_ids=[local_rank])
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
""",
        """
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def main(model, teacher, local_rank):
    dist.init_process_group("nccl")
    teacher_opt = torch.optim.SGD(teacher.parameters(), lr=0.1)
    model = DDP(model, device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
""",
        """
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def main(model, local_rank):
    dist.init_process_group("nccl")
    model_ema = torch.optim.swa_utils.AveragedModel(model)
    ddp_model = DDP(model, device_ids=[local_rank])
    optimizer = torch.optim.AdamW(ddp_model.parameters())
    return model_ema, optimizer
""",
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        for wrap in (*ctx.facts.ddp_wraps, *ctx.facts.helper_wraps):
            for call, module in optimizers_before_wrap(ctx, wrap):
                yield Finding(
                    call,
                    f"Optimizer built from the parameters of `{module}` before it is wrapped "
                    "in DistributedDataParallel: harmless for DDP (it keeps the same Parameter "
                    "objects), but wrong if the wrapper becomes FSDP, which flattens "
                    "parameters; build the optimizer after the wrap",
                )

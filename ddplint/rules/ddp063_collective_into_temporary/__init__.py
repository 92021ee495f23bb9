"""DDP063: a collective whose result lands in a tensor made in its own argument."""

from __future__ import annotations

from collections.abc import Iterator

from ddplint.context import FileContext
from ddplint.diagnostics import Severity
from ddplint.domain.collective_temporaries import (
    copied_from,
    destination,
    moved_host_name,
)
from ddplint.rule import Finding, Rule, register

_REDUCING = frozenset({"all_reduce", "reduce"})


@register
class CollectiveIntoTemporary(Rule):
    code = "DDP063"
    name = "collective-into-temporary"
    severity = Severity.ERROR
    summary = "A collective writes its result into a copy made in its own argument: it is lost"
    explanation = """
## What it does
Flags an in-place collective whose destination is a tensor the call's own argument creates
as a copy of a value: `dist.all_reduce(torch.tensor(total_loss).to(device))`,
`dist.reduce(torch.tensor(losses[-1]).cuda(), 0)`, `dist.broadcast(flag.clone(), 0)`. The
copy is `torch.tensor(...)` or `torch.Tensor(...)` (and its typed forms) of something other
than a constant, or `.clone()` of a value, with any of `.to(...)`, `.cuda()`, `.float()`,
`.detach()` and the like after it; or `.cuda()` of a name that only holds a tensor built in
host memory (`stop = torch.tensor(0)` or `torch.zeros(1)`, no `device=`), read again after
the collective: `.cuda()` of a host tensor is always a copy. Left alone: a constant
(`dist.all_reduce(torch.zeros(1).cuda())`, a common way to wait for every rank or to open
the communicator), and whatever may share memory with the value (`torch.as_tensor`,
`torch.from_numpy`, `x.detach()`, `x.to(device)`, `x.view(...)`, `x.cuda()` of a tensor
that may be on the GPU already: where no copy is made, the result reaches `x`).

## Why is this bad?
`all_reduce`, `reduce` and `broadcast` write their result into the tensor they are given.
A tensor built inside the call has no name: the sum (or rank 0's value) is written into it
and dropped with it, and the value it was copied from keeps this rank's own number. The
loss or metric used after the line is one rank's, not the ranks' sum; a value broadcast
that way never reaches the other ranks, which keep deciding on their own. On one process
the copy holds the only value there is, so the script looks right until it runs on N.

## Example
```python
dist.all_reduce(torch.tensor(total_loss).to(device))
print(f"epoch loss {total_loss / dist.get_world_size():.4f}")
```

## Use instead
```python
total = torch.tensor(total_loss, device=device)
dist.all_reduce(total)
print(f"epoch loss {total.item() / dist.get_world_size():.4f}")
```

## Fix safety
No automatic fix: the value read after the collective must be the new tensor, and only the
author knows each place it is read.

## References
- https://pytorch.org/docs/stable/distributed.html#torch.distributed.all_reduce
- https://pytorch.org/docs/stable/generated/torch.tensor.html
"""
    flag = (
        """
import torch
import torch.distributed as dist

def log_epoch(total_loss, device):
    dist.all_reduce(torch.tensor(total_loss).to(device))
    print(total_loss / dist.get_world_size())
""",
        """
import torch
import torch.distributed as dist

def reduce_metrics(metrics):
    for name, value in metrics.items():
        dist.reduce(torch.tensor(value).cuda(), 0)
    return metrics
""",
        """
import torch
import torch.distributed as dist

def agree_on_stop(stop):
    flag = torch.tensor([float(stop)], device="cuda")
    dist.broadcast(flag.clone(), src=0)
    return bool(flag.item())
""",
        """
import torch
import torch.distributed as dist

def agree_on_stop(stop):
    flag = torch.tensor(float(stop))
    dist.broadcast(flag.cuda(), src=0)
    return bool(flag.item())
""",
    )
    allow = (
        """
import torch
import torch.distributed as dist

def log_epoch(total_loss, device):
    total = torch.tensor(total_loss, device=device)
    dist.all_reduce(total)
    print(total.item() / dist.get_world_size())
""",
        """
import torch
import torch.distributed as dist

def warm_up():
    dist.all_reduce(torch.zeros(1).cuda())  # opens the communicator on every rank
""",
        """
import torch
import torch.distributed as dist

def average_gradients(model):
    for param in model.parameters():
        dist.all_reduce(param.grad.data)
        param.grad.data /= dist.get_world_size()
""",
        """
import torch
import torch.distributed as dist

def sum_losses(loss):
    dist.all_reduce(loss.detach())  # a view of `loss`: the sum reaches it
    return loss
""",
        """
import torch
import torch.distributed as dist

def sum_losses(loss):
    total = torch.tensor(loss)  # a tensor `loss` keeps its device
    dist.all_reduce(total.cuda())
    warm = torch.zeros(1)
    dist.all_reduce(warm.cuda())  # nobody reads `warm` again
    return total
""",
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        for call in ctx.calls:
            found = destination(ctx, call)
            if found is None:
                continue
            collective, target = found
            source = copied_from(ctx, target)
            if source is None:
                continue
            shown = ctx.code(source).strip()
            if collective in _REDUCING:
                lost = (
                    f"the sum over the ranks is written into that copy and lost: `{shown}` "
                    "keeps this rank's own value, and what is read after this line is one "
                    "rank's, not the ranks' total"
                )
            else:
                lost = (
                    "the other ranks receive the source rank's value into that copy and "
                    f"lose it: each keeps its own `{shown}`"
                )
            if moved_host_name(ctx, target) is not None:  # `stop.cuda()` of a host tensor
                copy = f"the GPU copy `{ctx.code(target).strip()}` of the host tensor `{shown}`"
                fix = (
                    f"build `{shown}` on the GPU (`device=`) or move it first (`{shown} = "
                    f"{shown}.cuda()`), then run the collective on it"
                )
            else:
                copy = f"a tensor copied from `{shown}` in its own argument"
                fix = (
                    "bind the tensor to a name, run the collective on it, and read the "
                    "result from it"
                )
            yield Finding(call, f"`{collective}` writes its result into {copy}: {lost}; {fix}")

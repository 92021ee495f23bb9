"""DDP056: a division by the world size whose result is thrown away."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from ddplint.context import FileContext
from ddplint.diagnostics import Severity
from ddplint.domain.ddp_facts import facts_of
from ddplint.rule import Finding, Rule, register

# Out-of-place divisions: each returns a new value and leaves its operand as it was.
_METHODS = frozenset({"div", "divide", "true_divide", "floor_divide"})
_FUNCTIONS = frozenset({f"torch.{name}" for name in _METHODS})


def _division(ctx: FileContext, call: cst.Call) -> tuple[str, cst.BaseExpression] | None:
    """(the divided operand's source, the divisor) of an out-of-place division call:
    `x.div(n)` or `torch.div(x, n)`."""
    args = [a for a in call.args if not a.star]
    if any(a.keyword is not None and a.keyword.value == "out" for a in args):
        return None  # `torch.div(total, n, out=total)` writes in place
    if ctx.call_name(call) in _FUNCTIONS and len(args) >= 2 and args[0].keyword is None:
        return ctx.code(args[0].value), args[1].value
    func = call.func
    if (
        type(func) is cst.Attribute
        and func.attr.value in _METHODS
        and ctx.call_name(call) is None
        and args
        and args[0].keyword is None
    ):
        return ctx.code(func.value), args[0].value
    return None


@register
class DiscardedAverage(Rule):
    code = "DDP056"
    name = "discarded-average"
    severity = Severity.ERROR
    summary = "Division by the world size whose result is discarded: the sum is used as the mean"
    explanation = """
## What it does
Flags a statement that divides by the world size out of place and throws the result away:
`total.true_divide(dist.get_world_size())`, `loss.div(world_size)`,
`torch.div(metric, args.world_size)` standing alone on their line (without `out=`). The
world size is recognised as a value (`dist.get_world_size()`, `WORLD_SIZE`, a name or
attribute bound to one), not by its name alone. In-place divisions (`div_`, `/=`) and
divisions whose result is assigned, returned or passed on are left alone.

## Why is this bad?
`div`, `divide` and `true_divide` return a new tensor; the tensor they are called on is
unchanged. After `dist.all_reduce(total)` sums the ranks' values, the discarded division
leaves `total` holding the sum: every average reported from it (a loss, an accuracy, the
metric that picks the best checkpoint) is N times too large with N processes, and right
only on one process, so the mistake hides in single-GPU testing.

## Example
```python
total = torch.tensor(loss_sum, device=device)
dist.all_reduce(total)
total.true_divide(dist.get_world_size())
return total.item()
```

## Use instead
```python
total = torch.tensor(loss_sum, device=device)
dist.all_reduce(total)
total /= dist.get_world_size()   # or total = total / ..., total.div_(...)
return total.item()
```

## Fix safety
No automatic fix: whether to divide in place or to assign depends on who else holds the
tensor.

## References
- https://pytorch.org/docs/stable/generated/torch.div.html
- https://pytorch.org/docs/stable/distributed.html#torch.distributed.all_reduce
"""
    flag = (
        """
import torch
import torch.distributed as dist

def mean_over_ranks(value, device):
    total = torch.tensor(value, device=device)
    dist.all_reduce(total)
    total.true_divide(dist.get_world_size())
    return total.item()
""",
        """
import torch
import torch.distributed as dist

def log_loss(loss, world_size):
    reduced = loss.detach().clone()
    dist.all_reduce(reduced)
    torch.div(reduced, world_size)
    print(reduced.item())
""",
        """
import os
import torch
import torch.distributed as dist

WORLD_SIZE = int(os.environ["WORLD_SIZE"])

class Meter:
    def sync(self):
        t = torch.tensor([self.avg], device="cuda")
        dist.all_reduce(t)
        t.div(WORLD_SIZE)
        self.avg = t.item()
""",
    )
    allow = (
        """
import torch
import torch.distributed as dist

def mean_over_ranks(value, device):
    total = torch.tensor(value, device=device)
    dist.all_reduce(total)
    total.div_(dist.get_world_size())
    return total.item()
""",
        """
import torch
import torch.distributed as dist

def mean_over_ranks(value, device):
    total = torch.tensor(value, device=device)
    dist.all_reduce(total)
    return total.true_divide(dist.get_world_size()).item()
""",
        """
import torch

def halve(x):
    x.div(2)  # a discarded division, but not by the world size: not this rule's
    return x
""",
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        facts = facts_of(ctx)
        for call in ctx.calls:
            statement = ctx.parent(call)
            if type(statement) is not cst.Expr:
                continue  # its result is assigned, returned or passed on
            division = _division(ctx, call)
            if division is None:
                continue
            operand, divisor = division
            if not facts.is_world_size(divisor):
                continue
            yield Finding(
                call,
                f"`{ctx.code(call)}` returns a new value and the result is discarded: "
                f"`{operand}` keeps the sum over the ranks, N times the mean with N "
                "processes (right only on one), and that is what is used; divide in place "
                f"(`{operand} /= ...`, `.div_(...)`) or assign the result",
            )

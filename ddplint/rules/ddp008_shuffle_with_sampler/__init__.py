"""DDP008: `DataLoader(shuffle=True, sampler=...)` raises ValueError at start."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from ddplint.context import FileContext
from ddplint.diagnostics import Applicability, Severity
from ddplint.domain.arguments_in_sight import true_at_every_call
from ddplint.domain.ddp_facts import LOADER_CLASSES, given_argument, is_true, passed_argument
from ddplint.rule import Finding, FixSpec, Rule, register

# DataLoader(dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, ...)
_SHUFFLE_POS, _SAMPLER_POS, _BATCH_SAMPLER_POS = 2, 3, 4


def _without_arg(call: cst.Call, arg: cst.Arg) -> cst.Call:
    """`call` with `arg` removed, keeping the other arguments' text and comments."""
    args = list(call.args)
    index = args.index(arg)
    removed = args.pop(index)
    if index == 0:
        after = removed.comma.whitespace_after if type(removed.comma) is cst.Comma else None
        merged = _merge(call.whitespace_before_args, after, prefer_after=False)
        return call.with_changes(args=args, whitespace_before_args=merged)
    previous = args[index - 1]
    before = previous.comma.whitespace_after if type(previous.comma) is cst.Comma else None
    if index < len(args):
        # A middle argument: the whitespace after its comma leads into the next argument.
        after = removed.comma.whitespace_after if type(removed.comma) is cst.Comma else None
        merged = _merge(before, after, prefer_after=False)
        if type(previous.comma) is cst.Comma and merged is not None:
            previous = previous.with_changes(
                comma=previous.comma.with_changes(whitespace_after=merged)
            )
    elif type(removed.comma) is cst.Comma:
        # The last argument, with a trailing comma: keep the trailing comma.
        merged = _merge(before, removed.comma.whitespace_after, prefer_after=True)
        previous = previous.with_changes(
            comma=removed.comma.with_changes(whitespace_after=merged),
            whitespace_after_arg=removed.whitespace_after_arg,
        )
    else:
        merged = _merge(before, removed.whitespace_after_arg, prefer_after=True)
        previous = previous.with_changes(
            comma=cst.MaybeSentinel.DEFAULT, whitespace_after_arg=merged
        )
    args[index - 1] = previous
    return call.with_changes(args=args)


def _comment(ws: cst.BaseParenthesizableWhitespace | None) -> cst.Comment | None:
    if type(ws) is cst.ParenthesizedWhitespace:
        return ws.first_line.comment
    return None


def _merge(
    before: cst.BaseParenthesizableWhitespace | None,
    after: cst.BaseParenthesizableWhitespace | None,
    prefer_after: bool,
) -> cst.BaseParenthesizableWhitespace | None:
    """Whitespace standing for `before` + (removed argument) + `after`, keeping the
    comments of both; `before` leads into the removed argument, `after` out of it."""
    if type(before) is cst.ParenthesizedWhitespace and type(after) is cst.ParenthesizedWhitespace:
        moved = after.first_line.comment
        extra = []
        if moved is not None:
            extra.append(
                cst.EmptyLine(indent=after.indent, whitespace=after.last_line, comment=moved)
            )
        return after.with_changes(
            first_line=before.first_line,
            empty_lines=[*before.empty_lines, *extra, *after.empty_lines],
        )
    if _comment(after) is not None or (prefer_after and after is not None):
        return after
    return before


@register
class ShuffleWithSampler(Rule):
    code = "DDP008"
    name = "shuffle-with-sampler"
    severity = Severity.ERROR
    needs_several = False  # the loader refuses the pair in one process too
    summary = "`DataLoader(shuffle=True)` together with a sampler raises ValueError at start"
    explanation = """
## What it does
Flags a `DataLoader` call that passes `shuffle=True` together with a `sampler=` (or a
`batch_sampler=`).

## Why is this bad?
`shuffle` and `sampler` are mutually exclusive: `DataLoader` raises
`ValueError: sampler option is mutually exclusive with shuffle` when it is built (and a
similar error for `batch_sampler`). The script dies before the first step. Under DDP the
shuffling belongs to the `DistributedSampler` (`shuffle=True` is its default), re-seeded each
epoch with `sampler.set_epoch(epoch)`.

## Example
```python
sampler = DistributedSampler(train_set)
loader = DataLoader(train_set, batch_size=32, shuffle=True, sampler=sampler)
```

## Use instead
```python
sampler = DistributedSampler(train_set, shuffle=True)
loader = DataLoader(train_set, batch_size=32, sampler=sampler)
```

## Fix safety
The fix removes the `shuffle=True` argument (a positional `True` becomes `False`); the
rest of the call, its formatting and comments, stay as they are. It is safe: the call could
not run before, and the sampler already decides the order.

## References
- https://pytorch.org/docs/stable/data.html#torch.utils.data.DataLoader
- https://pytorch.org/docs/stable/data.html#torch.utils.data.distributed.DistributedSampler
"""
    fixable = Applicability.SAFE
    # The ValueError does not depend on distribution: check every file.
    requires_distributed = False
    flag = (
        """import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

def build(train_set):
    dist.init_process_group("nccl")
    sampler = DistributedSampler(train_set)
    return DataLoader(train_set, batch_size=32, shuffle=True, sampler=sampler)
""",
        """import torch
import torch.utils.data as tud

def loaders(ds):
    torch.distributed.init_process_group("nccl")
    sampler = tud.distributed.DistributedSampler(ds, drop_last=True)
    return tud.DataLoader(
        ds,
        batch_size=64,
        shuffle=True,  # random order
        sampler=sampler,
        num_workers=4,
    )
""",
        """import torch.distributed as dist
from torch.utils.data import BatchSampler, DataLoader, DistributedSampler

def build(ds):
    dist.init_process_group("nccl")
    batches = BatchSampler(DistributedSampler(ds), batch_size=16, drop_last=True)
    return DataLoader(ds, batch_sampler=batches, shuffle=True)
""",
    )
    allow = (
        """import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

def build(train_set):
    dist.init_process_group("nccl")
    sampler = DistributedSampler(train_set, shuffle=True)
    return DataLoader(train_set, batch_size=32, sampler=sampler)
""",
        """import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

def build(train_set, distributed):
    sampler = DistributedSampler(train_set) if distributed else None
    return DataLoader(train_set, batch_size=32, shuffle=(sampler is None), sampler=sampler)
""",
        """import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

def build(train_set, val_set):
    dist.init_process_group("nccl")
    train = DataLoader(train_set, batch_size=32, sampler=DistributedSampler(train_set))
    val = DataLoader(val_set, batch_size=64, shuffle=False, sampler=None)
    return train, val
""",
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        for call in ctx.calls_to(*LOADER_CLASSES):
            shuffle = passed_argument(call, _SHUFFLE_POS, "shuffle")
            if shuffle is None:
                continue
            literal = is_true(shuffle.value)
            if not literal and not true_at_every_call(ctx, shuffle.value):
                continue  # `shuffle=shuffle`: True only where every call in sight says so
            sampler = given_argument(call, _SAMPLER_POS, "sampler")
            batch_sampler = given_argument(call, _BATCH_SAMPLER_POS, "batch_sampler")
            given = sampler or batch_sampler
            if given is None:
                continue
            samplers = _samplers(ctx, given.value, call)
            if not samplers:
                continue  # `sampler = None` on this path: nothing to conflict with
            which = "sampler" if sampler is not None else "batch_sampler"
            if not literal:
                fix = None  # the parameter may serve calls without a sampler
            elif shuffle.keyword is not None:
                fix = FixSpec(
                    "Remove `shuffle=True`",
                    replacements=((call, _without_arg(call, shuffle)),),
                    applicability=Applicability.SAFE,
                )
            else:
                fix = FixSpec(
                    "Pass `False` for `shuffle`",
                    replacements=((shuffle.value, "False"),),
                    applicability=Applicability.SAFE,
                )
            shown = (
                "`shuffle=True`"
                if literal
                else f"`shuffle={ctx.code(shuffle.value)}` (True at every call in sight)"
            )
            yield Finding(
                shuffle,
                f"{shown} with `{which}=`: DataLoader raises ValueError at construction "
                f"(the options are mutually exclusive); let the {which} decide the order",
                fix=fix,
                rests_on=samplers,
            )


def _samplers(
    ctx: FileContext, expr: cst.BaseExpression, at: cst.CSTNode
) -> tuple[cst.CSTNode, ...]:
    """The values other than `None` that `expr` may hold at `at`: where each is made (the
    finding holds only where one of them runs: `sampler = DistributedSampler(...)` under
    `elif is_distributed:` that no call takes), or `expr` itself when they are unknown;
    empty when every value is `None`."""
    values = [v for v in ctx.resolver.values(expr, at) if v.leaf]
    if not values:
        return (expr,)
    return tuple(
        v.expr for v in values if not (type(v.expr) is cst.Name and v.expr.value == "None")
    )

"""DDP007: gradient clipping inside a `no_sync()` block (local, unsynchronised gradients)."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from ddplint.context import FileContext
from ddplint.diagnostics import Severity
from ddplint.domain.apis import CLIP_FUNCTIONS
from ddplint.domain.ddp_facts import last_name
from ddplint.domain.no_sync import under_if_within, unsynced_block
from ddplint.rule import Finding, Rule, register

MESSAGE = (
    "Gradient clipping inside `no_sync()`: the gradients here are this rank's local, "
    "not yet all-reduced values, so the clipping norm differs from the global one; clip "
    "after the synchronising backward(), before optimizer.step()"
)


@register
class ClipInsideNoSync(Rule):
    code = "DDP007"
    name = "clip-inside-no-sync"
    severity = Severity.ERROR
    summary = "Gradient clipping inside no_sync(): clips local, unsynchronised gradients"
    explanation = """
## What it does
Flags `torch.nn.utils.clip_grad_norm_` / `clip_grad_value_` (under any import alias,
including after `scaler.unscale_(optimizer)`) called inside a `with model.no_sync():` block,
a `with ctx:` where `ctx = model.no_sync()`, or a conditional context such as
`with (nullcontext() if last else model.no_sync()):` when the clip is not itself guarded by
an `if`. A helper of the same file that clips, called inside the block, is flagged at its
clip call. Clipping after the block, at the synchronising step, is the correct pattern and
is not flagged.

## Why is this bad?
Inside `no_sync()` DDP skips the gradient all-reduce: `.grad` holds only this rank's
accumulated gradients. Clipping them uses a local norm that differs from the global one and
from the other ranks' norms, and it rescales a partial accumulation. The gradients that are
finally averaged are not the clipped global gradients the author intended.

## Example
```python
with model.no_sync():
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
```

## Use instead
```python
if not last_micro_step:
    with model.no_sync():
        loss.backward()
else:
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
```

## Fix safety
No fix is offered: the clip has to move to the synchronising step, which needs the
author's accumulation logic.

## References
- https://pytorch.org/docs/stable/generated/torch.nn.parallel.DistributedDataParallel.html#torch.nn.parallel.DistributedDataParallel.no_sync
- https://pytorch.org/docs/stable/notes/amp_examples.html#gradient-clipping
"""
    flag = (
        """
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def train(model: DDP, loader, optimizer, accum):
    for i, (x, y) in enumerate(loader):
        loss = torch.nn.functional.mse_loss(model(x), y) / accum
        if (i + 1) % accum != 0:
            with model.no_sync():
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        else:
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
""",
        """
import contextlib
import torch.distributed as dist
from torch.nn.utils import clip_grad_norm_ as clip

def train(model, loader, optimizer, scaler, accum):
    for i, (x, y) in enumerate(loader):
        last = (i + 1) % accum == 0
        context = contextlib.nullcontext() if last else model.no_sync()
        with context:
            scaler.scale(model(x).sum() / accum).backward()
            scaler.unscale_(optimizer)
            clip(model.parameters(), 1.0)
        if last:
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
""",
        """
import torch
import torch.distributed as dist

def micro_step(model, x):
    model(x).sum().backward()
    torch.nn.utils.clip_grad_value_(model.parameters(), 0.5)

def train(model, chunks, optimizer):
    ctx = model.no_sync()
    with ctx:
        for x in chunks[:-1]:
            micro_step(model, x)
    micro_step(model, chunks[-1])
    optimizer.step()
""",
    )
    allow = (
        """
import torch
import torch.distributed as dist

def train(model, loader, optimizer, accum):
    for i, (x, y) in enumerate(loader):
        loss = torch.nn.functional.mse_loss(model(x), y) / accum
        if (i + 1) % accum != 0:
            with model.no_sync():
                loss.backward()
            continue
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad()
""",
        """
import contextlib
import torch
import torch.distributed as dist

def train(model, loader, optimizer, accum):
    for i, (x, y) in enumerate(loader):
        sync = (i + 1) % accum == 0
        with contextlib.nullcontext() if sync else model.no_sync():
            model(x).sum().backward()
            if sync:
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                optimizer.zero_grad()
""",
        """
import torch
import torch.distributed as dist

def train(model, batches, optimizer):
    with model.no_sync():
        for x in batches[:-1]:
            model(x).sum().backward()
    model(batches[-1]).sum().backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    optimizer.step()
""",
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        clips = list(ctx.calls_to(*CLIP_FUNCTIONS))
        if not clips:
            return
        reported: set[int] = set()
        for clip in clips:
            if unsynced_block(ctx, clip) is not None:
                reported.add(id(clip))
                yield Finding(clip, MESSAGE)
        yield from self._through_helpers(ctx, clips, reported)

    @staticmethod
    def _through_helpers(
        ctx: FileContext, clips: list[cst.Call], reported: set[int]
    ) -> Iterator[Finding]:
        """Clip calls in a helper of this file called inside a no_sync() block."""
        clipping: dict[cst.FunctionDef, list[cst.Call]] = {}
        for clip in clips:
            func = ctx.scope(clip)
            if type(func) is cst.FunctionDef and not under_if_within(ctx, clip, func):
                clipping.setdefault(func, []).append(clip)
        if not clipping:
            return
        names = {func.name.value for func in clipping}
        for call in ctx.calls:
            if last_name(call.func) not in names:
                continue
            helpers = [f for f in ctx.resolver.callees(call) if f in clipping]
            if not helpers or unsynced_block(ctx, call) is None:
                continue
            for helper in helpers:
                for clip in clipping[helper]:
                    if id(clip) not in reported:
                        reported.add(id(clip))
                        yield Finding(
                            clip,
                            MESSAGE
                            + f" (`{helper.name.value}` is called inside a no_sync() block)",
                        )

"""DDP024: gradient accumulation in a DDP loop without no_sync()."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from ddplint.context import FileContext
from ddplint.diagnostics import Severity
from ddplint.domain import domain_of
from ddplint.domain.ddp_facts import facts_of
from ddplint.domain.ddp_steps import steps_ddp_model
from ddplint.domain.no_sync import controls_sync
from ddplint.rule import Finding, Rule, register
from ddplint.rules.ddp024_accumulation_without_no_sync.accumulation import (
    accumulation_loop,
    in_model_context,
)


@register
class AccumulationWithoutNoSync(Rule):
    code = "DDP024"
    name = "accumulation-without-no-sync"
    severity = Severity.INFO
    default = False  # opt-in: first contact (fresh7): 1 true / 3 false / 4 debatable
    summary = "Gradient accumulation under DDP without no_sync(): an all-reduce every micro-step"
    explanation = """\
## What it does
Flags the `.backward()` call of a training loop over a DDP model that runs `backward()`
on every iteration but `optimizer.step()` only every few (`if (i + 1) % accum == 0:`,
`if is_update_step:` computed that way, `if ni - last_step >= accumulate:`), or
that runs `backward()` in an inner loop over micro-batches before one `optimizer.step()`,
when nothing on that path uses `model.no_sync()` (nor toggles
`require_backward_grad_sync`, nor uses accelerate's `accumulate`).

## Why is this bad?
DDP all-reduces the gradients inside every `backward()`. While accumulating, only the
last micro-step's all-reduce is needed: the earlier ones send the whole gradient over the
network for nothing. The results are still correct (the sums are the same); the cost is
bandwidth and time, often a large share of the step on slow interconnects.

## Example
```python
for i, (x, y) in enumerate(loader):
    loss = criterion(model(x), y) / accum
    loss.backward()
    if (i + 1) % accum == 0:
        optimizer.step()
        optimizer.zero_grad()
```

## Use instead
```python
for i, (x, y) in enumerate(loader):
    sync = (i + 1) % accum == 0
    with (contextlib.nullcontext() if sync else model.no_sync()):
        loss = criterion(model(x), y) / accum
        loss.backward()
    if sync:
        optimizer.step()
        optimizer.zero_grad()
```

## Fix safety
No fix: the forward must move inside the `no_sync()` block too.

## References
- https://pytorch.org/docs/stable/generated/torch.nn.parallel.DistributedDataParallel.html#torch.nn.parallel.DistributedDataParallel.no_sync
"""
    flag = (
        """
import os
import torch
from torch.nn.parallel import DistributedDataParallel as DDP

def train(net, loader, optimizer, accum, local_rank, out_dir):
    model = DDP(net, device_ids=[local_rank])
    for step, batch in enumerate(loader):
        is_update_step = (step + 1) % accum == 0 or step + 1 == len(loader)
        loss = model(**batch).loss / accum
        loss.backward()
        if is_update_step:
            optimizer.step()
            optimizer.zero_grad()
    torch.save(model.module.state_dict(), os.path.join(out_dir, "model.pt"))
""",
        """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def train(net, loader, optimizer, accum, local_rank):
    model = DDP(net, device_ids=[local_rank])
    for i, (x, y) in enumerate(loader):
        loss = torch.nn.functional.cross_entropy(model(x), y) / accum
        loss.backward()
        if (i + 1) % accum == 0:
            optimizer.step()
            optimizer.zero_grad()
""",
        """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def train_one_epoch(model, loader, optimizer, scaler, args):
    for step, batch in enumerate(loader):
        with torch.autocast("cuda"):
            loss = model(batch).mean() / args.accum_steps
        scaler.scale(loss).backward()
        if step % args.accum_steps == args.accum_steps - 1:
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad(set_to_none=True)

def main(net, loader, optimizer, scaler, args):
    model = DDP(net, device_ids=[args.gpu])
    train_one_epoch(model, loader, optimizer, scaler, args)
""",
        """\
import torch.distributed as dist
import torch.nn as nn

def fit(net, loader, opt, grad_accum, rank):
    ddp_model = nn.parallel.DistributedDataParallel(net, device_ids=[rank])
    step = 0
    for inputs, targets in loader:
        step += 1
        out = ddp_model(inputs)
        (nn.functional.mse_loss(out, targets) / grad_accum).backward()
        if step % grad_accum == 0:
            opt.step()
            opt.zero_grad()
""",
    )
    allow = (
        """
import contextlib
import torch
from torch.nn.parallel import DistributedDataParallel as DDP

class Trainer:
    def __init__(self, net, loader, optimizer, accum, local_rank, distributed):
        self.distributed = distributed
        self.model = DDP(net, device_ids=[local_rank]) if distributed else net
        self.loader, self.optimizer, self.accum = loader, optimizer, accum

    def sync_context(self, step):
        if self.distributed and (step + 1) % self.accum != 0:
            return self.model.no_sync()
        return contextlib.nullcontext()

    def train_epoch(self):
        for step, (x, y) in enumerate(self.loader):
            with self.sync_context(step):
                loss = self.model(x, y) / self.accum
                loss.backward()
            if (step + 1) % self.accum == 0:
                self.optimizer.step()
                self.optimizer.zero_grad()
""",
        """\
import contextlib
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def train(net, loader, optimizer, accum, local_rank):
    model = DDP(net, device_ids=[local_rank])
    for i, (x, y) in enumerate(loader):
        sync = (i + 1) % accum == 0
        with contextlib.nullcontext() if sync else model.no_sync():
            loss = torch.nn.functional.cross_entropy(model(x), y) / accum
            loss.backward()
        if sync:
            optimizer.step()
            optimizer.zero_grad()
""",
        """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def train(net, loader, optimizer, accum, local_rank):
    model = DDP(net, device_ids=[local_rank])
    for i, (x, y) in enumerate(loader):
        model.require_backward_grad_sync = (i + 1) % accum == 0
        loss = torch.nn.functional.cross_entropy(model(x), y) / accum
        loss.backward()
        if (i + 1) % accum == 0:
            optimizer.step()
            optimizer.zero_grad()
""",
        """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def train(net, loader, optimizer, scheduler, local_rank):
    model = DDP(net, device_ids=[local_rank])
    for i, (x, y) in enumerate(loader):
        loss = torch.nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if (i + 1) % 100 == 0:
            scheduler.step()
""",
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        if not facts_of(ctx).ddp_wraps:
            return
        checked_scopes: dict[cst.CSTNode, bool] = {}
        for site in domain_of(ctx).backward.sites:
            backward = site.call
            if any(a.keyword is None for a in backward.args):
                continue  # `x.backward(grad)`, `accelerator.backward(x)`: not followed
            loop = accumulation_loop(ctx, backward)
            if (
                loop is None
                or not steps_ddp_model(ctx, loop, backward)
                or in_model_context(ctx, backward, loop)
            ):
                continue
            scope = ctx.scope(loop)
            if scope not in checked_scopes:
                checked_scopes[scope] = controls_sync(ctx, scope)
            if checked_scopes[scope]:
                continue
            yield Finding(
                backward,
                "gradient accumulation without `no_sync()`: DDP all-reduces gradients in "
                "every backward(), but the optimizer steps only once per several backward() "
                "calls; run the other micro-steps under `model.no_sync()` to skip the "
                "redundant all-reduces (results are the same)",
            )

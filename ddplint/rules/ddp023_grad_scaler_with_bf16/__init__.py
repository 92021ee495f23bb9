"""DDP023: GradScaler in a script whose autocast only uses bfloat16."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from ddplint.context import FileContext
from ddplint.diagnostics import Severity
from ddplint.domain.apis import AUTOCASTS, GRAD_SCALERS
from ddplint.domain.ddp_facts import argument, is_true, keyword
from ddplint.engine.constants import certainly
from ddplint.rule import Finding, Rule, register

_BF16 = frozenset({"torch.bfloat16"})


def _is_bf16(ctx: FileContext, expr: cst.BaseExpression, at: cst.CSTNode) -> bool:
    """Every value `expr` can hold is `torch.bfloat16`."""
    return certainly(ctx.resolver, expr, at, lambda value: ctx.qualname(value) in _BF16)


@register
class GradScalerWithBF16(Rule):
    code = "DDP023"
    name = "grad-scaler-with-bf16"
    severity = Severity.INFO
    default = False  # opt-in: harmless (DOMAIN: unneeded); judged 0 true / 0 false / 5 debatable
    summary = "GradScaler with bfloat16 autocast: loss scaling is unneeded"
    explanation = """\
## What it does
Flags a `GradScaler` (`torch.cuda.amp.GradScaler`, `torch.amp.GradScaler`,
`torch.GradScaler`, whatever the alias) created in a file whose every `autocast` uses
`dtype=torch.bfloat16`. Files with float16 autocast, an autocast without `dtype`
(float16 on CUDA), a dtype chosen at run time, or a scaler given an `enabled=` argument
are left alone.

## Why is this bad?
Loss scaling exists because float16 has a narrow exponent range: small gradients underflow
to zero. bfloat16 has the same exponent range as float32, so its gradients do not
underflow and the scaler only adds work (scaling, unscaling and an inf/NaN check every
step). Training is still correct; the scaler is dead weight that makes the loop harder to
read.

## Example
```python
scaler = torch.cuda.amp.GradScaler()
with torch.autocast("cuda", dtype=torch.bfloat16):
    loss = criterion(model(x), y)
scaler.scale(loss).backward()
scaler.step(optimizer)
scaler.update()
```

## Use instead
```python
with torch.autocast("cuda", dtype=torch.bfloat16):
    loss = criterion(model(x), y)
loss.backward()
optimizer.step()
```

## Fix safety
No fix: removing the scaler means rewriting the `scale`/`step`/`update` calls.

## References
- https://pytorch.org/docs/stable/amp.html#gradient-scaling
- https://pytorch.org/docs/stable/amp.html#torch.autocast
"""
    flag = (
        """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def train(model, loader, optimizer, local_rank):
    model = DDP(model, device_ids=[local_rank])
    scaler = torch.cuda.amp.GradScaler()
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(x).float().mean()
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
""",
        """\
import torch
import torch.distributed as dist
from torch.amp import GradScaler, autocast

AMP_DTYPE = torch.bfloat16

def step(model, x, optimizer, scaler):
    with autocast(device_type="cuda", dtype=AMP_DTYPE):
        loss = model(x).mean()
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()

scaler = GradScaler("cuda")
""",
        """\
import torch
import torch.distributed as dist
from torch.cuda.amp import GradScaler as Scaler, autocast

scaler = Scaler(enabled=True)

def forward(model, x):
    with autocast(dtype=torch.bfloat16):
        return model(x)
""",
    )
    allow = (
        """\
import torch
import torch.distributed as dist

scaler = torch.cuda.amp.GradScaler()

def forward(model, x):
    with torch.autocast("cuda", dtype=torch.float16):
        return model(x)
""",
        """\
import torch
import torch.distributed as dist

scaler = torch.amp.GradScaler("cuda")

def forward(model, x):
    with torch.autocast("cuda"):
        return model(x)
""",
        """\
import argparse
import torch
import torch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument("--bf16", action="store_true")
args = parser.parse_args()
dtype = torch.bfloat16 if args.bf16 else torch.float16
scaler = torch.cuda.amp.GradScaler(enabled=(dtype == torch.float16))

def forward(model, x):
    with torch.autocast("cuda", dtype=dtype):
        return model(x)
""",
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        scalers = [c for c in ctx.calls_to(*GRAD_SCALERS) if self._always_enabled(c)]
        if not scalers:
            return
        autocasts = list(ctx.calls_to(*AUTOCASTS))
        if not autocasts:
            return
        for cast in autocasts:
            dtype = argument(cast, 1, "dtype")
            if dtype is None or not _is_bf16(ctx, dtype, cast):
                return
        for scaler in scalers:
            yield Finding(
                scaler,
                "GradScaler is unneeded here: every autocast in this file uses bfloat16, "
                "which has float32's exponent range, so gradients do not underflow",
            )

    @staticmethod
    def _always_enabled(call: cst.Call) -> bool:
        enabled = keyword(call, "enabled")
        if enabled is None:
            # torch.amp.GradScaler(device, init_scale, growth_factor, backoff_factor,
            # growth_interval, enabled); torch.cuda.amp.GradScaler has no device first.
            positional = [a for a in call.args if a.keyword is None]
            return len(positional) < 5 and not any(a.star for a in call.args)
        return is_true(enabled.value)

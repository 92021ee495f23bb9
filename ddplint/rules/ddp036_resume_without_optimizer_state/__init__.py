"""DDP036: a resume that restores the model but not the optimizer's state."""

from __future__ import annotations

from collections.abc import Iterator

from ddplint.context import FileContext
from ddplint.diagnostics import Severity
from ddplint.domain.resume_loads import OPTIMIZER_NAME, keys_used, resumes
from ddplint.domain.saved_values import saved_keys
from ddplint.domain.saves import save_sites
from ddplint.rule import Finding, Rule, register
from ddplint.rules.ddp036_resume_without_optimizer_state.resume import (
    Optimizer,
    restores_optimizer,
    saves_optimizer_state,
    stateful_optimizers,
    trains_with,
)


@register
class ResumeWithoutOptimizerState(Rule):
    code = "DDP036"
    name = "resume-without-optimizer-state"
    severity = Severity.INFO
    needs_several = False  # one process resumes without the state too
    summary = "Resume restores the model but not the optimizer's state: the resumed run diverges"
    explanation = """
## What it does
Flags a `torch.load` of a checkpoint the script resumes from (a start epoch or step is read
from it: `start_epoch = ckpt["epoch"] + 1`; or a resume flag chooses it: `if args.resume:`)
whose result restores the model (`load_state_dict`), in a file that trains with an
optimizer that keeps state between steps (Adam, AdamW, RMSprop, SGD with momentum...),
when nothing in the file restores that optimizer's state (no `optimizer.load_state_dict`,
no optimizer handed to a `load_checkpoint`/`resume` call).

Proven, and reported by default: the start counter is read from the checkpoint and the
checkpoints the file saves hold no optimizer state (so nothing anywhere can restore it).
Unproven, shown under `--preview`: the file saves no checkpoint itself (another module
might save and restore the optimizer), or only a resume flag marks the load as a resume.

Also reported, proven: a file that saves the optimizer's state, whose resume (a start
counter read) reads the loaded checkpoint only by keys, all of one format the file saves,
and never the optimizer's key (`ckpt["model"]`, `ckpt["epoch"]`, and `"optimizer"` left
on disk).

Left alone: loads of pretrained weights to fine-tune from (no counter read, no resume
flag), plain SGD without momentum (it keeps no state), optimizers built by helpers, and
other files that save the optimizer's state (its restore is likely out of sight: the
checkpoint handed whole to a helper, or read in a format the file does not save).

## Why is this bad?
Adam's moment estimates, SGD's momentum buffers and the like are part of the training
state: the resumed run starts them from zero at the restored epoch, so its first steps
differ from those the uninterrupted run would take (with Adam, large steps from fresh
second-moment estimates; with momentum, lost velocity), and the result depends on where
the job happened to be preempted. With many processes, preemption and restarts are
common: a resume must restore the whole training state.

## Example
```python
ckpt = torch.load(args.resume, map_location="cpu")
model.module.load_state_dict(ckpt["model"])
start_epoch = ckpt["epoch"] + 1
...
torch.save({"model": model.module.state_dict(), "epoch": epoch}, path)
```

## Use instead
```python
ckpt = torch.load(args.resume, map_location="cpu")
model.module.load_state_dict(ckpt["model"])
optimizer.load_state_dict(ckpt["optimizer"])
start_epoch = ckpt["epoch"] + 1
...
state = {"model": model.module.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch}
torch.save(state, path)
```

## Fix safety
No automatic fix: the checkpoint must hold the optimizer's state first.

## References
- https://pytorch.org/tutorials/recipes/recipes/saving_and_loading_a_general_checkpoint.html
- https://pytorch.org/docs/stable/generated/torch.optim.Optimizer.load_state_dict.html
"""
    flag = (
        """import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def main(args, net, loader):
    local_rank = int(os.environ["LOCAL_RANK"])
    model = DDP(net.cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    start_epoch = 0
    if os.path.exists(args.ckpt):
        ckpt = torch.load(args.ckpt, map_location="cpu")
        model.module.load_state_dict(ckpt["model"])
        start_epoch = ckpt["epoch"] + 1
    for epoch in range(start_epoch, args.epochs):
        for x, y in loader:
            loss = torch.nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            torch.save({"model": model.module.state_dict(), "epoch": epoch}, args.ckpt)
""",
        """import torch
import torch.distributed as dist

class Trainer:
    def __init__(self, model, loader, cfg):
        self.model, self.loader, self.cfg = model, loader, cfg
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        self.start_iter = 0

    def resume(self, path):
        checkpoint = torch.load(path, map_location="cpu")
        self.model.module.load_state_dict(checkpoint["state_dict"])
        self.start_iter = checkpoint["iteration"]

    def train(self):
        for it, (x, y) in enumerate(self.loader, self.start_iter):
            loss = torch.nn.functional.cross_entropy(self.model(x), y)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            if it % 1000 == 0 and dist.get_rank() == 0:
                state = {"state_dict": self.model.module.state_dict(), "iteration": it}
                torch.save(state, f"{self.cfg.out}/model_{it:07d}.pth")
""",
        """import torch
import torch.distributed as dist

def run(model, loader, args):
    optimizer = torch.optim.RMSprop(model.parameters(), lr=1e-4)
    step = 0
    if args.resume:
        state = torch.load(args.resume, map_location="cpu")
        model.module.load_state_dict(state["weights"])
        step = state.get("step", 0)
    for x, y in loader:
        loss = torch.nn.functional.l1_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        step += 1
    if dist.get_rank() == 0:
        torch.save({"weights": model.module.state_dict(), "step": step}, args.out)
""",
    )
    allow = (
        """import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def main(args, net, loader):
    local_rank = int(os.environ["LOCAL_RANK"])
    model = DDP(net.cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    start_epoch = 0
    if os.path.exists(args.ckpt):
        ckpt = torch.load(args.ckpt, map_location="cpu")
        model.module.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        start_epoch = ckpt["epoch"] + 1
    for epoch in range(start_epoch, args.epochs):
        for x, y in loader:
            loss = torch.nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            state = {"model": model.module.state_dict(), "optimizer": optimizer.state_dict()}
            torch.save({**state, "epoch": epoch}, args.ckpt)
""",
        """import os
import torch
from torch.nn.parallel import DistributedDataParallel as DDP

def main(args, net, loader):
    local_rank = int(os.environ["LOCAL_RANK"])
    net.load_state_dict(torch.load(args.pretrained, map_location="cpu")["model"])
    model = DDP(net.cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for epoch in range(args.epochs):
        for x, y in loader:
            loss = torch.nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
""",
        """import torch
import torch.distributed as dist

def train(model, loader, args):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    start_epoch = 0
    if args.resume:
        ckpt = torch.load(args.resume, map_location="cpu")
        model.module.load_state_dict(ckpt["model"])
        start_epoch = ckpt["epoch"] + 1
    for epoch in range(start_epoch, args.epochs):
        for x, y in loader:
            loss = torch.nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            torch.save({"model": model.module.state_dict(), "epoch": epoch}, args.out)
""",
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        optimizers = stateful_optimizers(ctx)
        if not optimizers or restores_optimizer(ctx, optimizers):
            return
        saved = saves_optimizer_state(ctx)
        if saved:
            # The optimizer's state is saved: its restore is likely out of sight, unless
            # the resume reads every other key of that checkpoint and not this one.
            yield from _saved_not_restored(ctx, optimizers)
            return
        for resume in resumes(ctx):
            used = [o for o in optimizers if trains_with(ctx, o, resume.load)]
            if not used:
                continue
            shown, memory = _lost_state(used)
            counter = (
                f" and `{ctx.code(resume.counter).strip()}`" if resume.counter is not None else ""
            )
            name = sorted(resume.names)[0]
            yield Finding(
                resume.load,
                f"resuming from `{name}` restores the model{counter} but not the optimizer: "
                f"the {shown} {memory} restart from zero, so the resumed run diverges from "
                "the uninterrupted one; save `optimizer.state_dict()` in the checkpoint and "
                "load it back on resume",
                unproven=saved is None or resume.counter is None,
            )


def _saved_not_restored(ctx: FileContext, optimizers: list[Optimizer]) -> Iterator[Finding]:
    """Resumes (a start counter read) whose every use of the loaded checkpoint reads a
    key of one format this file saves (`saved_keys`), which also holds an optimizer key
    the resume never reads: the state is on disk, and left there."""
    formats = [keys for call, obj in save_sites(ctx) if (keys := saved_keys(ctx, obj, call))]
    for resume in resumes(ctx):
        used = keys_used(ctx, resume.load) if resume.counter is not None else None
        if not used or any(OPTIMIZER_NAME.search(key) for key in used):
            continue
        kept = sorted(
            key for keys in formats if used <= keys for key in keys if OPTIMIZER_NAME.search(key)
        )
        users = [o for o in optimizers if trains_with(ctx, o, resume.load)]
        if not kept or not users:
            continue
        shown, memory = _lost_state(users)
        name = sorted(resume.names)[0]
        assert resume.counter is not None
        yield Finding(
            resume.load,
            f"resuming from `{name}` restores the model and "
            f"`{ctx.code(resume.counter).strip()}` but not the optimizer, whose state the "
            f"checkpoint holds (`{kept[0]!r}`): the {shown} {memory} restart from zero, so "
            "the resumed run diverges from the uninterrupted one; load it back with "
            f"`optimizer.load_state_dict({name}[{kept[0]!r}])`",
        )


def _lost_state(optimizers: list[Optimizer]) -> tuple[str, str]:
    """How a message names the optimizers a resume leaves unrestored and what they keep
    (`AdamW`, "moment estimates"; "state" for several kinds)."""
    kinds = sorted({o.kind for o in optimizers})
    memory = optimizers[0].memory if len(kinds) == 1 else "state"
    return ", ".join(f"`{k}`" for k in kinds), memory

"""DDP006: `torch.save` of a DDP wrapper's `state_dict()` (keys prefixed with `module.`)."""

from __future__ import annotations

from collections.abc import Iterator

from ddplint.context import FileContext
from ddplint.diagnostics import Applicability, Severity
from ddplint.domain.ddp_facts import facts_of
from ddplint.domain.saves import save_sites
from ddplint.names import dotted
from ddplint.rule import Finding, FixSpec, Rule, register
from ddplint.rules.ddp006_state_dict_without_module.module_prefix import (
    loads_into_wrapper_elsewhere,
    loads_loosely_into_wrapper,
    may_be_prefix_free_wrapper,
    may_rely_on_prefixed_keys,
    nothing_loads_state_dicts,
    prefix_round_trips,
    prefixed_state_dicts,
    wrapped_conditionally,
)


@register
class StateDictWithoutModule(Rule):
    code = "DDP006"
    name = "state-dict-without-module"
    severity = Severity.WARNING
    needs_several = False  # the `module.` prefix is saved by one process too
    summary = "torch.save of the DDP wrapper's state_dict(): keys gain the `module.` prefix"
    fixable = Applicability.SAFE
    explanation = """
## What it does
Flags `torch.save(...)` of the `state_dict()` of a `DistributedDataParallel`-wrapped model,
directly, inside a dict (`{"model": model.state_dict()}`), through a variable holding that
dict, or through a saving helper (`save_on_master(...)`). `model.module.state_dict()`,
`model_without_ddp = model.module`, `getattr(model, "module", model)`, models that are
never wrapped are left alone, and so are checkpoints whose prefix round-trips: the file, a
project module in its folder, below it or in a folder above it (an evaluation or fine-tuning
script beside or above the trainer, imported or not) or a project module it imports strips
the prefix when loading
(`consume_prefix_in_state_dict_if_present`, `k.replace("module.", "")`,
`k[len("module."):]`), or the file resumes the checkpoint into the wrapper (a strict
`model.load_state_dict(...)` on the DDP model, `load_checkpoint(path, model=ddp_model)`).
Unproven (`--preview`): a save in a project none of whose Python files loads a state dict
(`load_state_dict`: only a load out of sight, a reader's own, meets the prefix), a save in a
project with a file that loads a state dict into an `nn.DataParallel` wrapper, or into a
name it binds to a DDP wrapper (an evaluation script run under the same launcher: the keys
carry the same prefix there), a file whose only load into the wrapper is `strict=False` (the
prefixed keys load there, but the loose load may be reading other weights), and a model that
is DDP on one path and, on another, a wrapper whose state dict has no prefix (FSDP's full
state dict; TorchRec's `DistributedModelParallel`, which strips the prefix of the DDP inside it).

## Why is this bad?
The wrapper registers the model as its submodule `module`, so every key of its state dict
starts with `module.`. Loading the checkpoint into a bare model (for evaluation, export or
fine-tuning on one GPU) fails with missing and unexpected keys, unless the loader strips the
prefix (`torch.nn.modules.utils.consume_prefix_in_state_dict_if_present`).

## Example
```python
model = DDP(model, device_ids=[local_rank])
torch.save({"model": model.state_dict(), "epoch": epoch}, path)
```

## Use instead
```python
torch.save({"model": model.module.state_dict(), "epoch": epoch}, path)
```

## Fix safety
The fix inserts `.module` (`model.state_dict()` becomes `model.module.state_dict()`), which
changes the keys of the checkpoint file. That is safe only when nothing else can depend on
the old keys, so the fix is safe only when all of these hold:
- the model is always wrapped (not `if args.distributed:`: a bare model has no `.module`);
- the file loads no checkpoint (`torch.load`), loads no state dict into anything but a
  provably bare model, and calls no loading helper (`load_checkpoint(model, path)`,
  `resume(...)`): a resume that loads the file back into the wrapper with `strict=False`
  would silently load nothing after the fix;
- no other file of the project (the tree under the nearest `pyproject.toml` or `.git`)
  mentions loading a checkpoint (`load_state_dict`, `torch.load`, `load_checkpoint`): an
  evaluation script or a resume helper might read this file.
Otherwise the fix is unsafe (`--unsafe-fixes`): make the load side strip or expect the
prefix at the same time (`consume_prefix_in_state_dict_if_present`).

## References
- https://pytorch.org/tutorials/intermediate/ddp_tutorial.html#save-and-load-checkpoints
- https://pytorch.org/docs/stable/generated/torch.nn.parallel.DistributedDataParallel.html
"""
    flag = (
        """
import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def main(net, args):
    model = DDP(net.cuda(), device_ids=[args.local_rank]) if args.distributed else net.cuda()
    if not args.distributed or dist.get_rank() == 0:
        torch.save({"model": model.state_dict()}, args.out)
""",
        """
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def main(net, local_rank):
    dist.init_process_group("nccl")
    model = DDP(net.cuda(local_rank), device_ids=[local_rank])
    if dist.get_rank() == 0:
        torch.save(model.state_dict(), "model.pt")
""",
        """
import torch
import torch.distributed as dist
from torch import nn

def main(net, optimizer, local_rank, epoch):
    dist.init_process_group("nccl")
    model = nn.parallel.DistributedDataParallel(net, device_ids=[local_rank])
    state = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch}
    if dist.get_rank() == 0:
        torch.save(state, "ckpt.pt")
""",
        """
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as Wrap

def save(model, path):
    if dist.get_rank() == 0:
        ckpt = {}
        ckpt["model"] = model.state_dict()
        torch.save(ckpt, path)

def main(net, local_rank):
    dist.init_process_group("nccl")
    save(Wrap(net, device_ids=[local_rank]), "last.pt")
""",
    )
    allow = (
        """
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def main(net, local_rank):
    dist.init_process_group("nccl")
    model = DDP(net.cuda(local_rank), device_ids=[local_rank])
    if dist.get_rank() == 0:
        torch.save(model.module.state_dict(), "model.pt")
""",
        """
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def main(model, optimizer, local_rank):
    dist.init_process_group("nccl")
    model = DDP(model, device_ids=[local_rank])
    model_without_ddp = model.module
    if dist.get_rank() == 0:
        torch.save({"model": model_without_ddp.state_dict(), "opt": optimizer.state_dict()}, "c.pt")
""",
        """
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def main(model, ema, local_rank):
    dist.init_process_group("nccl")
    ddp = DDP(model, device_ids=[local_rank])
    bare = getattr(ddp, "module", ddp)
    if dist.get_rank() == 0:
        torch.save({"model": bare.state_dict(), "ema": ema.state_dict()}, "c.pt")
""",
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        facts = facts_of(ctx)
        if not facts.ddp_wraps or prefix_round_trips(ctx):
            return
        loads_back: bool | None = None
        unloaded: bool | None = None
        wrapper_elsewhere: bool | None = None
        loosely_loaded = loads_loosely_into_wrapper(ctx)
        for call, obj in save_sites(ctx):
            offending = prefixed_state_dicts(ctx, obj, call)
            if not offending:
                continue
            fix = None
            if all(dotted(r) is not None for r, _ in offending):
                if loads_back is None:
                    loads_back = may_rely_on_prefixed_keys(ctx)
                unsafe = loads_back or any(wrapped_conditionally(ctx, r, a) for r, a in offending)
                fix = FixSpec(
                    "Save the wrapped model's state dict (`.module.state_dict()`)",
                    replacements=tuple(
                        (r, f"{ctx.code(r)}.module")
                        if facts.is_ddp_model(r, a)
                        else (r, f'getattr({ctx.code(r)}, "module", {ctx.code(r)})')
                        for r, a in offending
                    ),
                    applicability=Applicability.UNSAFE if unsafe else Applicability.SAFE,
                )
            names = ", ".join(sorted({f"`{ctx.code(r)}`" for r, _ in offending}))
            bare = [ctx.code(r) for r, a in offending if not facts.is_ddp_model(r, a)]
            if bare:
                # `DDP(model) if distributed else model`: bare on one GPU
                advice = f'`getattr({bare[0]}, "module", {bare[0]}).state_dict()`'
            else:
                advice = "`.module.state_dict()`"
            message = (
                f"Saving the state_dict() of the DDP-wrapped model {names}: every key gains "
                f"the `module.` prefix and loading into a bare model fails; save {advice}"
            )
            if unloaded is None:
                unloaded = nothing_loads_state_dicts(ctx.path)
            if unloaded:
                message += (
                    " (unproven: no code of this project loads a state dict, so only a "
                    "load out of sight meets the prefix)"
                )
            if wrapper_elsewhere is None:
                wrapper_elsewhere = loads_into_wrapper_elsewhere(ctx.path)
            if wrapper_elsewhere and not unloaded:
                message += (
                    " (unproven: another file of this project loads a state dict into a "
                    "DDP or DataParallel wrapper, where the prefixed keys load as they are)"
                )
            yield Finding(
                call,
                message,
                fix=fix,
                unproven=unloaded
                or loosely_loaded
                or any(may_be_prefix_free_wrapper(ctx, r, a) for r, a in offending)
                or bool(wrapper_elsewhere),
            )

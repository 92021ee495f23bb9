"""DDP006: `torch.save` of a DDP wrapper's `state_dict()` (keys prefixed with `module.`)."""

from __future__ import annotations

import re
from collections.abc import Iterator

import libcst as cst

from ddplint.analysis.checkpoints import strips_module_prefix
from ddplint.analysis.ddp_models import may_be_ddp_model
from ddplint.context import FileContext
from ddplint.diagnostics import Applicability, Severity
from ddplint.facts import DDP_CLASSES, argument, keyword
from ddplint.names import dotted
from ddplint.project import loaded_elsewhere
from ddplint.rule import Finding, FixSpec, Rule, register

_LOADER_NAME = re.compile(r"(^|_)(load|resume|restore|restart)(_|$)", re.IGNORECASE)
_SAVE_HELPER = re.compile(r"^(save_on_master|save_on_main|save_checkpoint|save_ckpt)$")


def _state_dict_receivers(ctx: FileContext, expr: cst.BaseExpression) -> Iterator[cst.Call]:
    """`x.state_dict()` calls inside `expr` (a dict, a list, the call itself)."""
    for node in ctx.walk(expr):
        if (
            isinstance(node, cst.Call)
            and isinstance(node.func, cst.Attribute)
            and node.func.attr.value == "state_dict"
            and not node.args
        ):
            yield node


def _saved_state_dicts(
    ctx: FileContext, obj: cst.BaseExpression, at: cst.CSTNode
) -> Iterator[cst.Call]:
    """The `.state_dict()` calls whose result `obj` holds at `at`: written inline, in the
    dict a variable is bound to, or stored later with `ckpt["model"] = ...`."""
    yield from _state_dict_receivers(ctx, obj)
    name = dotted(obj)
    if name is None:
        return
    binding = ctx.facts.reaching_binding(name, at)
    if binding is not None and binding.kind == "assign":
        yield from _state_dict_receivers(ctx, binding.value)
    scope = ctx.scope(at)
    for call in ctx.method_calls("state_dict"):
        if call.args or ctx.scope(call) is not scope or not ctx.before(call, at):
            continue
        statement = ctx.statement(call)
        if isinstance(statement, cst.Assign):
            for target in statement.targets:
                node = target.target
                if isinstance(node, cst.Subscript) and dotted(node.value) == name:
                    yield call
        elif isinstance(statement, cst.Expr):
            # `ckpt.update(model=model.state_dict())`
            argument_node = ctx.parent(call)
            parent = ctx.parent(argument_node) if argument_node is not None else None
            if (
                isinstance(parent, cst.Call)
                and isinstance(parent.func, cst.Attribute)
                and parent.func.attr.value == "update"
                and dotted(parent.func.value) == name
            ):
                yield call


def _save_sites(ctx: FileContext) -> Iterator[tuple[cst.Call, cst.BaseExpression]]:
    """(call, saved object): `torch.save(obj, ...)` and calls of saving helpers."""
    project = ctx.project
    local_savers = _local_savers(ctx)
    for call in ctx.calls:
        name = ctx.call_name(call)
        if name == "torch.save":
            obj = argument(call, 0, "obj")
            if obj is not None:
                yield call, obj
            continue
        func = call.func
        if isinstance(func, cst.Name) and func.value in local_savers:
            index = local_savers[func.value]
            obj = argument(call, index, "")
            if obj is not None:
                yield call, obj
            continue
        if not call.args or call.args[0].keyword is not None:
            continue
        helper = project.helper_saves(ctx, call) if project is not None else None
        short = func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", "")
        if helper is not None or (name is not None and _SAVE_HELPER.match(str(short))):
            yield call, call.args[0].value


def _local_savers(ctx: FileContext) -> dict[str, int]:
    """Functions of this file that `torch.save` one of their parameters: name -> position."""
    savers: dict[str, int] = {}
    for save in ctx.calls_to("torch.save"):
        func = ctx.scope(save)
        if not isinstance(func, cst.FunctionDef):
            continue
        obj = argument(save, 0, "obj")
        params = [p.name.value for p in (*func.params.posonly_params, *func.params.params)]
        if obj is not None and isinstance(obj, cst.Name) and obj.value in params:
            savers[func.name.value] = params.index(obj.value)
    return savers


def _wrapped_conditionally(ctx: FileContext, receiver: cst.BaseExpression, at: cst.CSTNode) -> bool:
    """Whether the DDP wrap reaching `at` sits under an `if` (the model may be bare)."""
    name = dotted(receiver)
    if name is None:
        return True
    binding = ctx.facts.reaching_binding(name, at)
    if binding is None or binding.kind != "assign":
        return True
    if not (isinstance(binding.value, cst.Call) and ctx.call_name(binding.value) in DDP_CLASSES):
        return True
    for ancestor in ctx.ancestors(binding.statement):
        if isinstance(ancestor, (cst.If, cst.Try, cst.IfExp)):
            return True
        if isinstance(ancestor, cst.FunctionDef):
            break
    return False


def _checks_wrapping(ctx: FileContext, state_call: cst.Call, receiver: cst.BaseExpression) -> bool:
    """The call sits in a branch of an `if`/`x if c else y` that tells wrapped from bare
    models (`model.module.state_dict() if hasattr(model, "module") else
    model.state_dict()`)."""
    name = dotted(receiver)
    unwrapped = f"{name}.module" if name else None
    for ancestor in ctx.ancestors(state_call):
        if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef)):
            return False
        if not isinstance(ancestor, (cst.If, cst.IfExp)):
            continue
        parts: list[cst.CSTNode]
        if isinstance(ancestor, cst.IfExp):
            parts = [ancestor.test, ancestor.body, ancestor.orelse]
        else:
            parts = [ancestor.test, ancestor.body]
            if ancestor.orelse is not None:
                parts.append(ancestor.orelse)
        # The test and the other branch: where the wrapped/bare distinction shows.
        parts = [p for p in parts if p is ancestor.test or not ctx.is_inside(state_call, p)]
        for node in (n for part in parts for n in ctx.walk(part)):
            if isinstance(node, cst.Attribute) and unwrapped and dotted(node) == unwrapped:
                return True
            if isinstance(node, cst.Call):
                called = ctx.call_name(node) or (
                    node.func.value if isinstance(node.func, cst.Name) else None
                )
                if called == "hasattr" and len(node.args) == 2:
                    value = node.args[1].value
                    if isinstance(value, cst.SimpleString) and value.evaluated_value == "module":
                        return True
                if (
                    called == "isinstance"
                    and len(node.args) == 2
                    and any(
                        ctx.qualname(n) in DDP_CLASSES
                        for n in ctx.walk(node.args[1].value)
                        if isinstance(n, (cst.Name, cst.Attribute))
                    )
                ):
                    return True
    return False


def _loads_into_wrapper(ctx: FileContext) -> bool:
    """The file loads a checkpoint back into a DDP-wrapped model (a strict
    `model.load_state_dict(...)` on the wrapper, `restart_from_checkpoint(path,
    model=ddp_model)`): a resume checkpoint that round-trips with its prefix."""
    for call in ctx.calls:
        func = call.func
        name = func.attr.value if isinstance(func, cst.Attribute) else None
        if isinstance(func, cst.Name):
            name = func.value
        if name == "load_state_dict" and isinstance(func, cst.Attribute):
            if _loads_loosely(call):
                continue  # `strict=False` would hide a mismatch: the round trip is unchecked
            candidates = [func.value]
        elif name is not None and _LOADER_NAME.search(name):
            candidates = [a.value for a in call.args]
        else:
            continue
        for model in candidates:
            if (
                isinstance(model, (cst.Name, cst.Attribute))
                and may_be_ddp_model(ctx, model, call)
                and not ctx.facts.is_unwrapped_ddp(model, call)
            ):
                return True
    return False


def _loads_loosely(call: cst.Call) -> bool:
    strict = keyword(call, "strict")
    return strict is not None and not (
        isinstance(strict.value, cst.Name) and strict.value.value == "True"
    )


def _prefix_round_trips(ctx: FileContext) -> bool:
    """The project's loading code expects the prefix: this file or a project module it
    imports strips `module.` when loading, or the file resumes into the wrapper itself."""
    project = ctx.project
    return (
        strips_module_prefix(ctx)
        or (project is not None and project.imports_prefix_stripper(ctx))
        or _loads_into_wrapper(ctx)
    )


def _may_rely_on_prefixed_keys(ctx: FileContext) -> bool:
    """Whether anything besides the save may depend on the `module.` prefix, so that
    changing what is saved is not safe: the file loads a checkpoint (`torch.load`), loads a
    state dict into anything but a provably bare model (a resume into the wrapper with
    `strict=False` would silently load nothing after the fix), calls a loading helper
    (`load_checkpoint(model, path)`, `resume(...)`), or another file of the project (the tree
    under its root, whatever files the run names) mentions loading a checkpoint."""
    if next(ctx.calls_to("torch.load"), None) is not None:
        return True
    for call in ctx.method_calls("load_state_dict"):
        receiver = call.func.value  # type: ignore[attr-defined]
        if not ctx.facts.is_unwrapped_ddp(receiver, call):
            return True
    for call in ctx.calls:  # `load_checkpoint(model, path)`, `resume(...)`: a loader elsewhere
        name = call.func.attr.value if isinstance(call.func, cst.Attribute) else None
        if isinstance(call.func, cst.Name):
            name = call.func.value
        if name not in (None, "load_state_dict") and _LOADER_NAME.search(name):
            return True
    return loaded_elsewhere(ctx.path, ctx.project)


@register
class StateDictWithoutModule(Rule):
    code = "DDP006"
    name = "state-dict-without-module"
    severity = Severity.WARNING
    summary = "torch.save of the DDP wrapper's state_dict(): keys gain the `module.` prefix"
    fixable = Applicability.SAFE
    explanation = """
## What it does
Flags `torch.save(...)` of the `state_dict()` of a `DistributedDataParallel`-wrapped model,
directly, inside a dict (`{"model": model.state_dict()}`), through a variable holding that
dict, or through a saving helper (`save_on_master(...)`). `model.module.state_dict()`,
`model_without_ddp = model.module`, `getattr(model, "module", model)`, models that are
never wrapped are left alone, and so are checkpoints whose prefix round-trips: the file or
a project module it imports strips the prefix when loading
(`consume_prefix_in_state_dict_if_present`, `k.replace("module.", "")`), or the file
resumes the checkpoint into the wrapper (a strict `model.load_state_dict(...)` on the DDP model,
`load_checkpoint(path, model=ddp_model)`).

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
        facts = ctx.facts
        if not facts.ddp_wraps or _prefix_round_trips(ctx):
            return
        loads_back: bool | None = None
        for call, obj in _save_sites(ctx):
            offending = []
            seen: set[int] = set()
            for state_call in _saved_state_dicts(ctx, obj, call):
                if id(state_call) in seen:
                    continue
                seen.add(id(state_call))
                receiver = state_call.func.value  # type: ignore[attr-defined]
                at = state_call
                if (
                    may_be_ddp_model(ctx, receiver, at)
                    and not facts.is_unwrapped_ddp(receiver, at)
                    and not _checks_wrapping(ctx, state_call, receiver)
                ):
                    offending.append((receiver, at))
            if not offending:
                continue
            fix = None
            if all(dotted(r) is not None for r, _ in offending):
                if loads_back is None:
                    loads_back = _may_rely_on_prefixed_keys(ctx)
                unsafe = loads_back or any(_wrapped_conditionally(ctx, r, a) for r, a in offending)
                fix = FixSpec(
                    "Save the wrapped model's state dict (`.module.state_dict()`)",
                    replacements=tuple(
                        (r, f"{ctx.code(r)}.module")
                        if ctx.facts.is_ddp_model(r, a)
                        else (r, f'getattr({ctx.code(r)}, "module", {ctx.code(r)})')
                        for r, a in offending
                    ),
                    applicability=Applicability.UNSAFE if unsafe else Applicability.SAFE,
                )
            names = ", ".join(sorted({f"`{ctx.code(r)}`" for r, _ in offending}))
            bare = [ctx.code(r) for r, a in offending if not ctx.facts.is_ddp_model(r, a)]
            if bare:
                # `DDP(model) if distributed else model`: bare on one GPU
                advice = f'`getattr({bare[0]}, "module", {bare[0]}).state_dict()`'
            else:
                advice = "`.module.state_dict()`"
            yield Finding(
                call,
                f"Saving the state_dict() of the DDP-wrapped model {names}: every key gains "
                f"the `module.` prefix and loading into a bare model fails; save {advice}",
                fix=fix,
            )

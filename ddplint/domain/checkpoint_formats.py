"""The formats of the checkpoints a module writes, and whether they hold GPU state.

A checkpoint's format is the set of string keys of the dict literal `torch.save` writes
(`{"epoch": e, "model": model.state_dict(), "optimizer": ...}`). A load whose result is
read by two keys or more of one format (`ckpt["model"]`, `ckpt["optimizer"]`) reads a
checkpoint the project writes itself: a resume, whatever path the command line gives it.
The format is known wherever the dict is built: in the call of `torch.save`, or at the
call of a project helper that saves the dict it is handed (`save_checkpoint({...}, path)`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain.apis import SAVE
from ddplint.engine.resolve import argument

_DEPTH = 3
_SHOWN = 48  # the longest saved expression a message quotes
# What moves the saved tensors off the GPU (or keeps them off it).
OFF_GPU = re.compile(r"\.cpu\(|[\"']cpu[\"']|cpu_offload|\.numpy\(|\.tolist\(")
# FSDP / DCP full state dicts gathered onto the CPU (`FullStateDictConfig(offload_to_cpu=
# True)`, `StateDictOptions(cpu_offload=True)`, fairscale's `state_dict_device=
# torch.device("cpu")`, also as a config dict's entry): `.state_dict()` there holds CPU
# tensors.
GATHERED_TO_CPU = re.compile(
    r"offload_to_cpu\s*=\s*True|cpu_offload\s*=\s*True"
    r"|state_dict_device[\"']?\s*[:=]\s*(?:torch\.device\(\s*)?[\"']cpu"
)
_STATE = re.compile(r"([\w.]*)\.state_dict\(\s*\)")
# State that holds no tensors of the model: a learning-rate scheduler's, a GradScaler's, a
# sampler's or a loader's `state_dict()` (numbers and lists), whatever device the job uses.
_TENSORLESS_STATE = re.compile(r"sched|scaler|sampler|loader", re.IGNORECASE)


@dataclass(frozen=True)
class SavedFormat:
    """A checkpoint format a module writes: its keys, whether the dict holds a model's or
    optimizer's state as it is (`state_on_gpu`: see `state_on_gpu`), and the saved
    expression as a message quotes it."""

    keys: tuple[str, ...]
    state_on_gpu: bool | None
    shown: str


def state_on_gpu(ctx: FileContext, saved: cst.BaseExpression, at: cst.CSTNode) -> bool | None:
    """True: a module's or optimizer's `state_dict()`, kept where it is (on the GPU of a
    CUDA job; a scheduler's or scaler's holds no tensors and is no evidence); False: moved
    to the CPU first (`.cpu()`); None: something else."""
    texts = []
    for value in ctx.resolver.values(saved, at, _DEPTH):
        texts.append(ctx.code(value.expr))
        if type(value.expr) is cst.Dict:  # `{"model": weights}`: what `weights` holds
            texts.extend(
                ctx.code(item.expr)
                for e in value.expr.elements
                for item in ctx.resolver.values(e.value, value.at, _DEPTH)
            )
    if any(OFF_GPU.search(text) for text in texts):
        return False
    if GATHERED_TO_CPU.search(ctx.source):
        return None  # a sharded model's full state, gathered onto the CPU by a config
    owners = [m.group(1) for text in texts for m in _STATE.finditer(text)]
    if owners and all(_moved_off_gpu(ctx, owner.partition(".")[0], at) for owner in owners):
        return False  # `model = model.to("cpu")`, then `model.module.state_dict()`
    return True if any(not _TENSORLESS_STATE.search(owner) for owner in owners) else None


def _moved_off_gpu(ctx: FileContext, name: str, at: cst.CSTNode) -> bool:
    """Every binding of `name` reaching `at` moves the object to the CPU (`model =
    model.to("cpu")`), and nothing between that binding and `at` in the frame moves it
    back (`model.cuda()`, `model.to(device)`)."""
    bindings = ctx.resolver.reaching(name, at) if name.isidentifier() else []
    if not bindings:
        return False
    for binding in bindings:
        value = binding.value
        if binding.kind != "assign" or value is None or not OFF_GPU.search(ctx.code(value)):
            return False
        for call in ctx.model.calls_by_frame(ctx.model.frame(at)):
            func = call.func
            if (
                type(func) is cst.Attribute
                and func.attr.value in ("cuda", "to")
                and type(func.value) is cst.Name
                and func.value.value == name
                and ctx.before(binding.statement, call)
                and not ctx.is_inside(call, binding.statement)
                and ctx.before(call, at)
            ):
                return False
    return True


def dict_keys(ctx: FileContext, saved: cst.BaseExpression, at: cst.CSTNode) -> set[str]:
    """The string keys of the dict literals the resolver finds `saved` to be."""
    keys: set[str] = set()
    for value in ctx.resolver.values(saved, at, _DEPTH):
        if type(value.expr) is cst.Dict:
            keys |= {
                k
                for e in value.expr.elements
                if type(e) is cst.DictElement and (k := literal_key(e.key)) is not None
            }
    return keys


def literal_key(expr: cst.BaseExpression | None) -> str | None:
    return expr.raw_value if type(expr) is cst.SimpleString else None


def shown(ctx: FileContext, expr: cst.BaseExpression) -> str:
    """`expr` as a message shows it: its code when short, else elided (`{...}`)."""
    text = ctx.code(expr)
    if "\n" not in text and len(text) <= _SHOWN:
        return text
    return "{...}" if type(expr) is cst.Dict else "..."


def saved_formats(ctx: FileContext) -> tuple[SavedFormat, ...]:
    """The formats of the dicts of two keys or more the module's `torch.save` calls write."""
    found = []
    for save in ctx.calls_to(SAVE):
        saved = argument(save, 0, "obj")
        if saved is None:
            continue
        keys = dict_keys(ctx, saved, save)
        if len(keys) >= 2:
            found.append(
                SavedFormat(tuple(sorted(keys)), state_on_gpu(ctx, saved, save), shown(ctx, saved))
            )
    return tuple(found)


def keys_read(ctx: FileContext, load: cst.Call) -> set[str]:
    """The string keys read by subscript from the name `load`'s result is bound to, in its
    function after it (`ckpt["model"]`)."""
    statement = ctx.statement(load)
    if not (type(statement) is cst.Assign and statement.value is load):
        return set()
    names = {t.target.value for t in statement.targets if type(t.target) is cst.Name}
    scope = ctx.scope(load)
    keys = set()
    for node in ctx.nodes_of(cst.Subscript):
        if (
            type(node) is cst.Subscript
            and type(node.value) is cst.Name
            and node.value.value in names
            and len(node.slice) == 1
            and type(node.slice[0].slice) is cst.Index
            and ctx.scope(node) is scope
            and ctx.before(load, node)
        ):
            key = literal_key(node.slice[0].slice.value)
            if key is not None:
                keys.add(key)
    return keys

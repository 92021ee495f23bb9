"""The `module.` prefix a DDP wrapper adds to its state dict's keys: which saved state
dicts carry it, whether the project's loading expects it (a round trip), and whether other
code may rely on it (so that saving `.module.state_dict()` instead changes behaviour)."""

from __future__ import annotations

import os
import re

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain.checkpoints import strips_module_prefix
from ddplint.domain.ddp_facts import DDP_CLASSES, facts_of, keyword
from ddplint.domain.project_view import project_of
from ddplint.domain.saves import saved_state_dicts
from ddplint.names import dotted
from ddplint.project.queries import loaded_elsewhere, strips_prefix_elsewhere
from ddplint.project_files import project_files, project_root

_LOADER_NAME = re.compile(r"(^|_)(load|resume|restore|restart)(_|$)", re.IGNORECASE)


def prefixed_state_dicts(
    ctx: FileContext, obj: cst.BaseExpression, at: cst.CSTNode
) -> list[tuple[cst.BaseExpression, cst.Call]]:
    """(receiver, call) for each `.state_dict()` of a DDP wrapper that `obj` holds at `at`,
    unless the code tells wrapped from bare models there (`hasattr(model, "module")`)."""
    found = []
    seen: set[int] = set()
    for state_call in saved_state_dicts(ctx, obj, at):
        if id(state_call) in seen:
            continue
        seen.add(id(state_call))
        receiver = state_call.func.value  # type: ignore[attr-defined]
        if (
            facts_of(ctx).is_ddp_model(receiver, state_call)
            and not facts_of(ctx).is_unwrapped_ddp(receiver, state_call)
            and not _checks_wrapping(ctx, state_call, receiver)
        ):
            found.append((receiver, state_call))
    return found


# Wrappers whose full state dict carries no `module.` prefix (FSDP's state-dict hooks strip
# their own wrapper names; TorchRec's DistributedModelParallel strips the prefix of the DDP
# it wraps its dense part in).
_PREFIX_FREE_WRAPPERS = frozenset(
    {
        "torch.distributed.fsdp.FullyShardedDataParallel",
        "torchrec.DistributedModelParallel",
        "torchrec.distributed.DistributedModelParallel",
        "torchrec.distributed.model_parallel.DistributedModelParallel",
    }
)


def may_be_prefix_free_wrapper(
    ctx: FileContext, receiver: cst.BaseExpression, at: cst.CSTNode
) -> bool:
    """The model `receiver` holds at `at` may also be a wrapper whose state dict has no
    `module.` prefix (DDP on one path, FSDP or TorchRec's DistributedModelParallel on
    another), and which path saves is not known."""
    return any(
        type(v.expr) is cst.Call and ctx.call_name(v.expr) in _PREFIX_FREE_WRAPPERS
        for v in ctx.resolver.values(receiver, at)
    )


def wrapped_conditionally(ctx: FileContext, receiver: cst.BaseExpression, at: cst.CSTNode) -> bool:
    """Whether the DDP wrap reaching `at` sits under an `if` (the model may be bare)."""
    name = dotted(receiver)
    if name is None:
        return True
    binding = facts_of(ctx).reaching_binding(name, at)
    if binding is None or binding.kind != "assign":
        return True
    if not (type(binding.value) is cst.Call and ctx.call_name(binding.value) in DDP_CLASSES):
        return True
    for ancestor in ctx.ancestors(binding.statement):
        if isinstance(ancestor, (cst.If, cst.Try, cst.IfExp)):
            return True
        if type(ancestor) is cst.FunctionDef:
            break
    return False


def _checks_wrapping(ctx: FileContext, state_call: cst.Call, receiver: cst.BaseExpression) -> bool:
    """The call sits in a branch of an `if`/`x if c else y` that tells wrapped from bare
    models (`model.module.state_dict() if hasattr(model, "module") else
    model.state_dict()`), or in the handler of a `try` whose body reaches `model.module`
    (`try: sd = model.module.state_dict()` / `except: sd = model.state_dict()`: the
    handler runs where the model has no `.module`)."""
    name = dotted(receiver)
    unwrapped = f"{name}.module" if name else None
    for ancestor in ctx.ancestors(state_call):
        if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef)):
            return False
        parts: list[cst.CSTNode]
        test: cst.CSTNode | None = None
        if type(ancestor) is cst.IfExp:
            test = ancestor.test
            parts = [test, ancestor.body, ancestor.orelse]
        elif type(ancestor) is cst.If:
            test = ancestor.test
            parts = [test, ancestor.body]
            if ancestor.orelse is not None:
                parts.append(ancestor.orelse)
        elif type(ancestor) is cst.Try and any(
            ctx.is_inside(state_call, h) for h in ancestor.handlers
        ):
            parts = [ancestor.body]
        else:
            continue
        # The test and the other branch: where the wrapped/bare distinction shows.
        parts = [p for p in parts if p is test or not ctx.is_inside(state_call, p)]
        for node in (n for part in parts for n in ctx.walk(part)):
            if type(node) is cst.Attribute and unwrapped and dotted(node) == unwrapped:
                return True
            if type(node) is cst.Call:
                called = ctx.call_name(node) or (
                    node.func.value if type(node.func) is cst.Name else None
                )
                if called == "hasattr" and len(node.args) == 2:
                    value = node.args[1].value
                    if type(value) is cst.SimpleString and value.evaluated_value == "module":
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


def _loads_into_wrapper(ctx: FileContext, loosely: bool = False) -> bool:
    """The file loads a checkpoint back into a DDP-wrapped model (a strict
    `model.load_state_dict(...)` on the wrapper, `restart_from_checkpoint(path,
    model=ddp_model)`): a resume checkpoint that round-trips with its prefix. `loosely`:
    only with `strict=False`, which loads prefixed keys just as well but may be reading
    another file (pretrained weights), so whether this checkpoint round-trips is unknown."""
    for call in ctx.calls:
        func = call.func
        name = func.attr.value if type(func) is cst.Attribute else None
        if type(func) is cst.Name:
            name = func.value
        if name == "load_state_dict" and type(func) is cst.Attribute:
            if _loads_loosely(call) is not loosely:
                continue
            candidates = [func.value]
        elif name is not None and _LOADER_NAME.search(name) and not loosely:
            candidates = [a.value for a in call.args]
        else:
            continue
        for model in candidates:
            if (
                isinstance(model, (cst.Name, cst.Attribute))
                and facts_of(ctx).is_ddp_model(model, call)
                and not facts_of(ctx).is_unwrapped_ddp(model, call)
            ):
                return True
    return False


def _loads_loosely(call: cst.Call) -> bool:
    strict = keyword(call, "strict")
    return strict is not None and not (
        type(strict.value) is cst.Name and strict.value.value == "True"
    )


def prefix_round_trips(ctx: FileContext) -> bool:
    """The project's loading code expects the prefix: this file or another module of the
    project strips `module.` when loading (an evaluation script, a fine-tuning loader), or
    the file resumes into the wrapper itself."""
    return (
        strips_module_prefix(ctx)
        or _loads_into_wrapper(ctx)
        or strips_prefix_elsewhere(ctx.path, project_of(ctx))
    )


# A module that may load a state dict into an `nn.DataParallel` wrapper, whose keys carry
# the same `module.` prefix: it writes both (`DataParallel(` not after `Distributed`).
_DATA_PARALLEL = re.compile(r"(?<!Distributed)DataParallel\(")
_LOADS_STATE = re.compile("load_state_dict")
# `net = DistributedDataParallel(...)`, `self.model = nn.parallel.DDP(...)`: a name bound
# to a DDP wrapper (a commented-out line starts with `#` and does not match).
_DDP_BOUND = re.compile(
    r"^[ \t]*([\w.]+)\s*=\s*(?:[\w.]+\.)?(?:DistributedDataParallel|DDP)\(", re.MULTILINE
)


def loads_into_wrapper_elsewhere(path: str) -> bool:
    """Another Python file of the project loads a state dict where the prefixed keys load
    as they are: it wraps a model in `nn.DataParallel` and loads a state dict (an analysis
    script restoring the checkpoint into `DataParallel(model)`), or loads one into a name
    it binds to a DDP wrapper (`net = DistributedDataParallel(net, ...)`, then
    `net.load_state_dict(...)`: an evaluation script run under the same launcher). A text
    test: whether that load reads this checkpoint is not followed."""
    if not os.path.isfile(path):
        return False
    path = os.path.abspath(path)
    files = project_files(project_root(path))
    loading = files.matching(_LOADS_STATE) - {path}
    if files.matching(_DATA_PARALLEL) & loading:
        return True
    return any(
        _loads_into_ddp_name(files.text(p) or "") for p in loading & files.matching(_DDP_BOUND)
    )


def _loads_into_ddp_name(text: str) -> bool:
    """The text binds a name to a DDP wrapper and loads a state dict into that name."""
    names = {m.group(1) for m in _DDP_BOUND.finditer(text)}
    return any(re.search(rf"\b{re.escape(n)}\.load_state_dict\(", text) for n in names)


def nothing_loads_state_dicts(path: str) -> bool:
    """No Python file of the project at `path` (this one included) loads a state dict
    (`load_state_dict`): the prefixed keys break only a load out of sight, a user's. A
    snippet (no file) is not known to be alone."""
    if not os.path.isfile(path):
        return False
    return not project_files(project_root(os.path.abspath(path))).matching(_LOADS_STATE)


def loads_loosely_into_wrapper(ctx: FileContext) -> bool:
    """The file loads a state dict into the DDP wrapper with `strict=False` only: the
    prefixed keys load there, but whether that load reads this checkpoint is unknown."""
    return _loads_into_wrapper(ctx, loosely=True)


def may_rely_on_prefixed_keys(ctx: FileContext) -> bool:
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
        if not facts_of(ctx).is_unwrapped_ddp(receiver, call):
            return True
    for call in ctx.calls:  # `load_checkpoint(model, path)`, `resume(...)`: a loader elsewhere
        name = call.func.attr.value if type(call.func) is cst.Attribute else None
        if type(call.func) is cst.Name:
            name = call.func.value
        if name not in (None, "load_state_dict") and _LOADER_NAME.search(name):
            return True
    return loaded_elsewhere(ctx.path, project_of(ctx))

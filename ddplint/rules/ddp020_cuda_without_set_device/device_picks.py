"""Which GPU a process uses: where a file picks one per process (`set_device`, a device
index from a variable, `CUDA_VISIBLE_DEVICES`, a local rank handed to a setup helper),
where it uses the default CUDA device (`.cuda()`, `torch.device("cuda")`), and branches
of an `if` on which no GPU is picked while another branch picks one."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain import domain_of
from ddplint.domain.apis import DDP_CLASSES
from ddplint.domain.ddp_facts import argument, facts_of, keyword, string_value
from ddplint.domain.device_ranks import device_kind
from ddplint.domain.device_setters import reaches_set_device, sets_device
from ddplint.domain.devices import device_arguments
from ddplint.domain.rank_kinds import LOCAL_RANK_NAME, RankKind
from ddplint.domain.receivers import exclusive_branch
from ddplint.names import dotted

INIT = "torch.distributed.init_process_group"
_CUDA_SETTERS = frozenset({"torch.cuda.set_device", "torch.cuda.device"})


# APIs whose `device=` names a device type, not a GPU: "cuda" there is correct.
_DEVICE_TYPE_APIS = ("torch.amp", "torch.autocast", "torch.cuda.amp", "torch.cpu.amp")
_LIBRARIES = frozenset({"torch", "numpy", "torchvision", "transformers"}) | frozenset(
    sys.stdlib_module_names
)


# Project helpers (imported from another module) that may select the GPU themselves.
_SETUP_HELPER = re.compile(
    r"set_?device|(setup|init|configure).*(dist|device|gpu|cuda|ddp)|(dist|device|gpu|cuda|ddp)"
    r".*(setup|init)",
    re.IGNORECASE,
)


def _library(qualified: str) -> bool:
    """A call into the standard library or a known library (not a project helper)."""
    return qualified.split(".")[0] in _LIBRARIES


def _is_plain_cuda(expr: cst.BaseExpression | None) -> bool:
    """`"cuda"`, or `"cuda" if ... else "cpu"`."""
    if expr is None:
        return False
    if type(expr) is cst.IfExp:
        return _is_plain_cuda(expr.body) or _is_plain_cuda(expr.orelse)
    return string_value(expr) == "cuda"


def device_picks(ctx: FileContext) -> Iterator[cst.CSTNode]:
    """Where the file chooses a GPU per process: `set_device` (`reaches_set_device`: also
    on a device module, or in project code it calls), a device index from a variable
    (`.cuda(args.gpu)`, `torch.device("cuda", local_rank)`, `device_ids=[local_rank]`),
    `CUDA_VISIBLE_DEVICES`, or a local rank handed to a helper of another module (which may
    call `set_device` itself)."""
    for call in ctx.calls:
        name = ctx.call_name(call)
        if reaches_set_device(ctx, call):
            yield call
            continue
        for value in device_arguments(ctx, call):
            if isinstance(value, (cst.Name, cst.Attribute, cst.FormattedString)):
                is_to = type(call.func) is cst.Attribute and call.func.attr.value == "to"
                if device_kind(ctx, value, call) is not None or (
                    not is_to and not _bound_to_plain_cuda(ctx, value, call)
                ):
                    yield call
                    break
        if name is not None and "." in name and not _library(name):
            if _SETUP_HELPER.search(name.rpartition(".")[2]):
                yield call
                continue
            for arg in call.args:
                local_name = LOCAL_RANK_NAME.match((dotted(arg.value) or "").rpartition(".")[2])
                if local_name or domain_of(ctx).rank_kinds.kind(arg.value, call) is RankKind.LOCAL:
                    yield call
                    break
    for node in ctx.nodes_of(cst.SimpleString):
        if type(node) is cst.SimpleString and "CUDA_VISIBLE_DEVICES" in node.value:
            yield node


def unset_branch(ctx: FileContext, use: cst.CSTNode, picks: list[cst.CSTNode]) -> cst.If | None:
    """The `if` whose other branch sets the default device (`torch.cuda.set_device`)
    while `use` runs on a branch that sets none, when every default-setting pick of the
    file is in such a sibling branch and `use` is not on the single-process side."""
    setters = [p for p in picks if type(p) is cst.Call and ctx.call_name(p) in _CUDA_SETTERS]
    others = [p for p in picks if not _passes_index(ctx, p) and not _other_setter(ctx, p)]
    if not setters or len(setters) != len(others):
        return None
    branches = [exclusive_branch(ctx, setter, use) for setter in setters]
    if any(branch is None for branch in branches) or domain_of(ctx).gates.single_process(use):
        return None
    return branches[0]


def _other_setter(ctx: FileContext, pick: cst.CSTNode) -> bool:
    """A setter other than `torch.cuda.set_device` (`torch.accelerator.set_device_index`, a
    device module's or project code's): left out of the per-branch decision, which compares
    the branches of the CUDA setters only (a known limit: such a setter on the use's own
    path is not seen there)."""
    return (
        type(pick) is cst.Call
        and ctx.call_name(pick) not in _CUDA_SETTERS
        and sets_device(ctx, pick)
    )


def _passes_index(ctx: FileContext, pick: cst.CSTNode) -> bool:
    """A pick that names a device for one call (`.cuda(args.gpu)`), not for the process."""
    if type(pick) is not cst.Call or sets_device(ctx, pick):
        return False
    return any(True for _ in device_arguments(ctx, pick))


def per_call_only(ctx: FileContext, picks: list[cst.CSTNode]) -> bool:
    """Every pick names a device for one call (`device_ids=[rank]`, `.cuda(args.gpu)`):
    none sets the process's default device (`set_device`, `CUDA_VISIBLE_DEVICES`, a
    setup helper)."""
    return all(_passes_index(ctx, pick) for pick in picks)


def wrapped_with_device_ids(ctx: FileContext, use: cst.CSTNode) -> cst.Call | None:
    """The `DDP(model, device_ids=[...])` call whose module `use` (`model.cuda()`) put on
    the default device, if any."""
    for wrap in ctx.calls_to(*DDP_CLASSES):
        module = argument(wrap, 0, "module")
        if module is None or keyword(wrap, "device_ids") is None:
            continue
        if any(v.expr is use for v in ctx.resolver.values(module, wrap)):
            return wrap
    return None


def unpicked_init(ctx: FileContext, picks: list[cst.CSTNode]) -> tuple[cst.Call, cst.If] | None:
    """An `init_process_group` on a branch where no GPU is picked, while another branch
    picks one (`if slurm: set_device(...); init(...) else: init(...)`); with the `if`."""
    for init in ctx.calls_to(INIT):
        branches = [exclusive_branch(ctx, pick, init) for pick in picks]
        if branches and all(branch is not None for branch in branches):
            return init, branches[0]  # type: ignore[return-value]
    return None


def _bound_to_plain_cuda(ctx: FileContext, expr: cst.BaseExpression, at: cst.CSTNode) -> bool:
    name = dotted(expr)
    if name is None:
        return False
    binding = facts_of(ctx).binding_before(name, at)
    if binding is None or binding.kind != "assign":
        return False
    value = binding.value
    if type(value) is cst.Call and ctx.call_name(value) == "torch.device":
        return _is_plain_cuda(argument(value, 0, "type")) and argument(value, 1, "index") is None
    return _is_plain_cuda(value)


def default_device_uses(ctx: FileContext) -> Iterator[cst.CSTNode]:
    """`.cuda()`, `torch.device("cuda")`, `.to("cuda")`, `device="cuda"` and
    `device = "cuda"` bindings used by `.to(device)`."""
    reported_bindings: set[int] = set()
    for call in ctx.calls:
        func = call.func
        name = ctx.call_name(call)
        if name == "torch.device":
            if _is_plain_cuda(argument(call, 0, "type")) and argument(call, 1, "index") is None:
                yield call
            continue
        if type(func) is cst.Attribute and name is None:
            method = func.attr.value
            if method == "cuda" and argument(call, 0, "device") is None:
                yield call
                continue
            if method == "to":
                target = argument(call, 0, "device")
                if _is_plain_cuda(target):
                    yield call
                    continue
                if type(target) is cst.Name:
                    binding = facts_of(ctx).binding_before(target.value, call)
                    if (
                        binding is not None
                        and binding.kind == "assign"
                        and _is_plain_cuda(binding.value)
                        and id(binding.value) not in reported_bindings
                    ):
                        reported_bindings.add(id(binding.value))
                        yield binding.value
                    continue
        device = keyword(call, "device")
        if (
            device is not None
            and _is_plain_cuda(device.value)
            and not (name or "").startswith(_DEVICE_TYPE_APIS)
        ):
            yield call

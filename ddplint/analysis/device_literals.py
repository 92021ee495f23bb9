"""Hard-coded CUDA devices: where a call is given a literal device index (`"cuda:0"`,
`.cuda(0)`, `device_ids=[0]`), and where such a literal is still the right device for the
process that runs it (under a rank check, on the single-process path, one entry of a
per-rank table, a default overridden per rank)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

from ddplint.analysis.local_rank_names import LOCAL_RANK_NAME
from ddplint.context import FileContext
from ddplint.facts import DDP_CLASSES, argument, keyword, string_value
from ddplint.names import dotted

_CUDA_INDEX = re.compile(r"^cuda:\d+$")
_DEVICE_CALLS = frozenset({"torch.device", "torch.cuda.set_device", "torch.cuda.device"})


def _int_literal(expr: cst.BaseExpression | None) -> cst.Integer | None:
    return expr if isinstance(expr, cst.Integer) else None


def _cuda_literal(expr: cst.BaseExpression | None) -> cst.SimpleString | None:
    """A `"cuda:N"` string, also as a branch of `"cuda:0" if available else "cpu"`."""
    if isinstance(expr, cst.IfExp):
        return _cuda_literal(expr.body) or _cuda_literal(expr.orelse)
    if isinstance(expr, cst.SimpleString):
        value = string_value(expr)
        if value is not None and _CUDA_INDEX.match(value):
            return expr
    return None


@dataclass(frozen=True)
class HardcodedDevice:
    """A literal device index and how the call spells it (`device_ids=[0]`)."""

    literal: cst.SimpleString | cst.Integer
    what: str

    @property
    def shown(self) -> str:
        """`"cuda:0"` for a device string, else "index in `.cuda(0)`"."""
        if self.what.startswith('"'):
            return self.what
        return f"index in `{self.what}`"


def _device_value(
    ctx: FileContext, expr: cst.BaseExpression | None, at: cst.CSTNode
) -> cst.SimpleString | None:
    """A `"cuda:N"` literal given directly, or through a name bound to one (or to
    `torch.device("cuda:N")`)."""
    if expr is None:
        return None
    literal = _cuda_literal(expr)
    if literal is not None:
        return literal
    if isinstance(expr, cst.Name):
        binding = ctx.facts.reaching_binding(expr.value, at)
        if binding is not None and binding.kind == "assign":
            value = binding.value
            literal = _cuda_literal(value)
            if literal is not None:
                return literal
    return None


def hardcoded_devices(ctx: FileContext) -> Iterator[HardcodedDevice]:
    """Every literal CUDA device index a call is given, in call order."""
    for call in ctx.calls:
        name = ctx.call_name(call)
        func = call.func
        method = func.attr.value if isinstance(func, cst.Attribute) else None
        if name in _DEVICE_CALLS:
            first = argument(call, 0, "device" if name != "torch.device" else "type")
            literal = _cuda_literal(first)
            if literal is not None:
                yield HardcodedDevice(literal, f'"{string_value(literal)}"')
            elif name == "torch.device":
                index = _int_literal(argument(call, 1, "index"))
                if index is not None and string_value(first) == "cuda":
                    yield HardcodedDevice(index, f'torch.device("cuda", {index.value})')
            elif (number := _int_literal(first)) is not None:
                yield HardcodedDevice(number, f"{ctx.code(func)}({number.value})")
            continue
        if name in DDP_CLASSES:
            ids = keyword(call, "device_ids")
            if ids is not None and isinstance(ids.value, cst.List) and len(ids.value.elements) == 1:
                index = _int_literal(ids.value.elements[0].value)
                if index is not None:
                    yield HardcodedDevice(index, f"device_ids=[{index.value}]")
            out = keyword(call, "output_device")
            number = _int_literal(out.value) if out is not None else None
            if number is not None:
                yield HardcodedDevice(number, f"output_device={number.value}")
            continue
        if method == "cuda" and not (name or "").startswith("torch."):
            first = argument(call, 0, "device")
            if (number := _int_literal(first)) is not None:
                yield HardcodedDevice(number, f".cuda({number.value})")
                continue
            literal = _cuda_literal(first)
            if literal is not None:
                yield HardcodedDevice(literal, f'.cuda("{string_value(literal)}")')
            continue
        if method == "to" and not (name or "").startswith("torch."):
            first = argument(call, 0, "device")
            if (number := _int_literal(first)) is not None:
                yield HardcodedDevice(number, f".to({number.value})")
                continue
            literal = _device_value(ctx, first, call)
            if literal is not None:
                yield HardcodedDevice(literal, f'"{string_value(literal)}"')
            continue
        device = keyword(call, "device")
        if device is not None:
            literal = _device_value(ctx, device.value, call)
            if literal is not None:
                yield HardcodedDevice(literal, f'"{string_value(literal)}"')


def right_for_its_process(ctx: FileContext, literal: cst.CSTNode) -> bool:
    """The literal device is right where it runs: under a rank check, on the single-process
    side of a distributed switch, one entry of a per-rank table, or a single-process default
    overridden per rank later in its scope."""
    return (
        ctx.facts.rank_guard(literal) is not None
        or _on_single_process_path(ctx, literal)
        or _default_overridden_per_rank(ctx, literal)
        or _in_per_rank_table(ctx, literal)
    )


_DISTRIBUTED_SWITCH = re.compile(
    r"distributed|ddp|world_size|is_initialized|local_rank|multi_gpu|WORLD_SIZE|LOCAL_RANK",
    re.IGNORECASE,
)


def _on_single_process_path(ctx: FileContext, literal: cst.CSTNode) -> bool:
    """The literal sits in a branch chosen by whether the run is distributed
    (`if args.distributed: ... else: device = "cuda:0"`): one process, GPU 0 is right."""
    child = literal
    for ancestor in ctx.ancestors(literal):
        if isinstance(ancestor, cst.FunctionDef):
            return _after_distributed_return(ctx, ancestor, child)
        if isinstance(ancestor, cst.ClassDef):
            return False
        if (
            isinstance(ancestor, (cst.If, cst.IfExp))
            and child is not ancestor.test
            and _is_distributed_switch(ctx, ancestor.test)
        ):
            return True
        child = ancestor
    return False


def _is_distributed_switch(ctx: FileContext, test: cst.BaseExpression) -> bool:
    names = " ".join(ctx.names_in(test))
    strings = " ".join(
        str(n.evaluated_value) for n in ctx.walk(test) if isinstance(n, cst.SimpleString)
    )
    return bool(_DISTRIBUTED_SWITCH.search(names) or _DISTRIBUTED_SWITCH.search(strings))


def _after_distributed_return(ctx: FileContext, func: cst.FunctionDef, top: cst.CSTNode) -> bool:
    """`if local_rank != -1: ...; return ...` earlier in the function: what follows is the
    single-process path."""
    if not isinstance(func.body, cst.IndentedBlock):
        return False
    for statement in func.body.body:
        if statement is top:
            return False
        if (
            isinstance(statement, cst.If)
            and _is_distributed_switch(ctx, statement.test)
            and ctx.flow.leaves(statement.body)
        ):
            return True
    return False


def _in_per_rank_table(ctx: FileContext, literal: cst.CSTNode) -> bool:
    """`{0: ...device="cuda:0"..., 1: ...device="cuda:1"...}[rank]`: a table with one entry
    per rank, the device index equal to the key."""
    if isinstance(literal, cst.SimpleString):
        value = literal.evaluated_value
        index = value.rpartition(":")[2] if isinstance(value, str) else ""
    else:
        index = literal.value if isinstance(literal, cst.Integer) else ""
    for ancestor in ctx.ancestors(literal):
        if isinstance(ancestor, cst.DictElement) and isinstance(ancestor.key, cst.Integer):
            return ancestor.key.value == index
        if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef)):
            return False
    return False


def _default_overridden_per_rank(ctx: FileContext, literal: cst.CSTNode) -> bool:
    """`device = torch.device("cuda:0" if cuda else "cpu")`, then later in the same scope
    `device = torch.device("cuda", LOCAL_RANK)` in DDP mode: the literal is only the
    single-process default (YOLO-style `select_device`)."""
    statement = None
    for ancestor in ctx.ancestors(literal):
        if isinstance(ancestor, cst.Assign):
            statement = ancestor
            break
        # only a device value: the literal, `torch.device(...)` of it, `x if c else y`
        if isinstance(ancestor, (cst.IfExp, cst.Arg)):
            continue
        if isinstance(ancestor, cst.Call) and ctx.call_name(ancestor) == "torch.device":
            continue
        return False
    if statement is None or len(statement.targets) != 1:
        return False
    name = dotted(statement.targets[0].target)
    if name is None:
        return False
    scope = ctx.scope(statement)
    for binding in ctx.bindings.get(name, ()):
        if (
            binding.kind == "assign"
            and binding.scope is scope
            and binding.statement is not statement
            and ctx.before(statement, binding.statement)
            and not any(
                isinstance(n, cst.BaseExpression) and _cuda_literal(n) is not None
                for n in ctx.walk(binding.value)
            )
            and any(
                LOCAL_RANK_NAME.match(n.rpartition(".")[2].lower())
                for n in ctx.names_in(binding.value)
            )
        ):
            return True
    return False

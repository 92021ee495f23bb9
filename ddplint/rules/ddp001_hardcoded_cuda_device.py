"""DDP001: a hard-coded CUDA device (`"cuda:0"`, `.cuda(0)`, `device_ids=[0]`) in a DDP script."""

from __future__ import annotations

import re
from collections.abc import Iterator

import libcst as cst

from ddplint.context import Binding, FileContext
from ddplint.diagnostics import Applicability, Severity
from ddplint.facts import (
    DDP_CLASSES,
    argument,
    environ_key,
    keyword,
    string_value,
    strip_conversion,
)
from ddplint.names import dotted
from ddplint.rule import Finding, FixSpec, Rule, register

_CUDA_INDEX = re.compile(r"^cuda:\d+$")
_LOCAL_RANK_NAME = re.compile(r"^(ddp_)?local_rank$")
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


class _Site:
    __slots__ = ("literal", "what")

    def __init__(self, literal: cst.SimpleString | cst.Integer, what: str) -> None:
        self.literal = literal
        self.what = what


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


def _sites(ctx: FileContext) -> Iterator[_Site]:
    for call in ctx.calls:
        name = ctx.call_name(call)
        func = call.func
        method = func.attr.value if isinstance(func, cst.Attribute) else None
        if name in _DEVICE_CALLS:
            first = argument(call, 0, "device" if name != "torch.device" else "type")
            literal = _cuda_literal(first)
            if literal is not None:
                yield _Site(literal, f'"{string_value(literal)}"')
            elif name == "torch.device":
                index = _int_literal(argument(call, 1, "index"))
                if index is not None and string_value(first) == "cuda":
                    yield _Site(index, f'torch.device("cuda", {index.value})')
            elif (number := _int_literal(first)) is not None:
                yield _Site(number, f"{ctx.code(func)}({number.value})")
            continue
        if name in DDP_CLASSES:
            ids = keyword(call, "device_ids")
            if ids is not None and isinstance(ids.value, cst.List) and len(ids.value.elements) == 1:
                index = _int_literal(ids.value.elements[0].value)
                if index is not None:
                    yield _Site(index, f"device_ids=[{index.value}]")
            out = keyword(call, "output_device")
            number = _int_literal(out.value) if out is not None else None
            if number is not None:
                yield _Site(number, f"output_device={number.value}")
            continue
        if method == "cuda" and not (name or "").startswith("torch."):
            first = argument(call, 0, "device")
            if (number := _int_literal(first)) is not None:
                yield _Site(number, f".cuda({number.value})")
                continue
            literal = _cuda_literal(first)
            if literal is not None:
                yield _Site(literal, f'.cuda("{string_value(literal)}")')
            continue
        if method == "to" and not (name or "").startswith("torch."):
            first = argument(call, 0, "device")
            if (number := _int_literal(first)) is not None:
                yield _Site(number, f".to({number.value})")
                continue
            literal = _device_value(ctx, first, call)
            if literal is not None:
                yield _Site(literal, f'"{string_value(literal)}"')
            continue
        device = keyword(call, "device")
        if device is not None:
            literal = _device_value(ctx, device.value, call)
            if literal is not None:
                yield _Site(literal, f'"{string_value(literal)}"')


def _shown(site: _Site) -> str:
    if site.what.startswith('"'):
        return site.what
    return f"index in `{site.what}`"


class _LocalRankNames:
    """The bindings that may hold the local rank, sorted once per file by frame, so that
    asking at every hard-coded device stays linear in the file."""

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        # (name, is attribute, binding), in the order of `ctx.bindings`, which breaks ties.
        self.by_scope: dict[cst.CSTNode, list[tuple[int, str, bool, Binding]]] = {}
        attributes: list[tuple[int, int, str, Binding]] = []
        index = 0
        for name, bindings in ctx.bindings.items():
            last = name.rpartition(".")[2]
            is_attr = name.startswith("self.")
            for binding in bindings:
                if binding.kind in ("augassign", "for", "with"):
                    continue
                named = bool(_LOCAL_RANK_NAME.match(last))
                if not named and (
                    binding.kind == "param" or not _env_local_rank(ctx, binding.value)
                ):
                    continue
                index += 1
                self.by_scope.setdefault(binding.scope, []).append((index, name, is_attr, binding))
                if is_attr:
                    attributes.append((-ctx.order[binding.statement], index, name, binding))
        # `self.x` bindings of every frame, latest first.
        self.attributes = sorted(attributes, key=lambda a: a[:2])

    def at(self, at: cst.CSTNode) -> str | None:
        """A variable holding the local rank that is bound before `at` in its scope (or the
        module's), e.g. `local_rank = int(os.environ["LOCAL_RANK"])` or a `local_rank`
        parameter; failing that, a `self.` attribute bound anywhere."""
        ctx = self.ctx
        scope = ctx.scope(at)
        # Rank: the innermost scope, then the latest binding, then the first in the table.
        best: tuple[int, int, int, str] | None = None
        frames = (scope,) if scope is ctx.module else (scope, ctx.module)
        for frame in frames:
            inner = 1 if frame is scope else 0
            for index, name, is_attr, binding in self.by_scope.get(frame, ()):
                if (
                    not is_attr
                    and binding.kind != "param"
                    and not ctx.before(binding.statement, at)
                ):
                    continue
                rank = (inner, ctx.order[binding.statement], -index, name)
                if best is None or rank > best:
                    best = rank
        if best is None or best[0] == 0:
            for minus_order, index, name, binding in self.attributes:
                if binding.scope is scope or binding.scope is ctx.module:
                    continue
                rank = (0, -minus_order, -index, name)
                if best is None or rank > best:
                    best = rank
                break
        return best[3] if best else None


def _env_local_rank(ctx: FileContext, expr: cst.BaseExpression) -> bool:
    expr = strip_conversion(expr, ("int",))
    return environ_key(ctx, expr) == "LOCAL_RANK"


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
                _LOCAL_RANK_NAME.match(n.rpartition(".")[2].lower())
                for n in ctx.names_in(binding.value)
            )
        ):
            return True
    return False


def _sets_visible_devices(ctx: FileContext) -> bool:
    return "CUDA_VISIBLE_DEVICES" in ctx.source


@register
class HardcodedCudaDevice(Rule):
    code = "DDP001"
    name = "hardcoded-cuda-device"
    severity = Severity.ERROR
    summary = "Hard-coded CUDA device index in a DDP script: every process picks the same GPU"
    fixable = Applicability.UNSAFE
    explanation = """
## What it does
Flags a CUDA device index written as a literal in a distributed script: `"cuda:0"` in
`torch.device(...)`, `.to(...)` or a `device=` argument, `.cuda(0)`,
`torch.cuda.set_device(0)`, `torch.device("cuda", 0)`, and `device_ids=[0]` /
`output_device=0` of `DistributedDataParallel`. Device strings built from the local rank
(`f"cuda:{local_rank}"`, `torch.device("cuda", local_rank)`) are not flagged, nor is a
script that manages `CUDA_VISIBLE_DEVICES` itself, a literal under a rank check, or one on
the single-process side of an `if args.distributed:` switch.

## Why is this bad?
torchrun starts one process per GPU and every process runs the same code. With a literal
index all processes of a node put their model and tensors on the same GPU: it runs out of
memory, or NCCL refuses with "Duplicate GPU detected", while the other GPUs stay idle.

## Example
```python
local_rank = int(os.environ["LOCAL_RANK"])
model = Net().to("cuda:0")
model = DDP(model, device_ids=[0])
```

## Use instead
```python
local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
model = Net().to(f"cuda:{local_rank}")
model = DDP(model, device_ids=[local_rank])
```

## Fix safety
The fix replaces the literal with the local-rank variable in scope (`"cuda:0"` becomes
`f"cuda:{local_rank}"`, `.cuda(0)` becomes `.cuda(local_rank)`). It is unsafe: the script
may restrict each process to one GPU by other means (a scheduler setting
`CUDA_VISIBLE_DEVICES` per task), in which case index 0 was right. No fix is offered when
no local-rank variable is in scope.

## References
- https://pytorch.org/docs/stable/notes/ddp.html
- https://pytorch.org/tutorials/intermediate/ddp_tutorial.html
- https://pytorch.org/docs/stable/elastic/run.html
"""
    flag = (
        """
import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    model = torch.nn.Linear(10, 10).to("cuda:0")
    model = DDP(model, device_ids=[local_rank])
""",
        """
import os
import torch
import torch.nn as nn
import torch.distributed as dist

dist.init_process_group("nccl")
local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
model = nn.Linear(10, 10).cuda(local_rank)
model = nn.parallel.DistributedDataParallel(model, device_ids=[0])
""",
        """
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as Wrap

def setup():
    dist.init_process_group("nccl")
    device = torch.device("cuda:0")
    model = torch.nn.Linear(4, 4).cuda(0)
    return Wrap(model), device
""",
    )
    allow = (
        """
import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

LOCAL_RANK = int(os.getenv("LOCAL_RANK", -1))

def main(build_model):
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    if LOCAL_RANK != -1:
        torch.cuda.set_device(LOCAL_RANK)
        device = torch.device("cuda", LOCAL_RANK)
        dist.init_process_group("nccl")
    model = build_model().to(device)
    if LOCAL_RANK != -1:
        model = DDP(model, device_ids=[LOCAL_RANK])
""",
        """
import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
dist.init_process_group("nccl")
device = torch.device(f"cuda:{local_rank}")
model = DDP(torch.nn.Linear(4, 4).to(device), device_ids=[local_rank])
""",
        """
import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

local_rank = int(os.environ["LOCAL_RANK"])
dist.init_process_group("nccl")
device = torch.device("cuda", local_rank)
torch.cuda.set_device(device)
model = DDP(torch.nn.Linear(4, 4).cuda(local_rank), device_ids=[local_rank])
""",
        """
import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

# SLURM: one task per GPU, each task sees only its own GPU.
os.environ["CUDA_VISIBLE_DEVICES"] = os.environ["SLURM_LOCALID"]
dist.init_process_group("nccl")
model = DDP(torch.nn.Linear(4, 4).to("cuda:0"), device_ids=[0])
""",
        """
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
names = {"cuda:0": "first GPU"}
print(names["cuda:0"])
x = torch.zeros(3, device="cpu")
""",
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        if _sets_visible_devices(ctx):
            return
        seen: set[int] = set()
        local_rank_names = _LocalRankNames(ctx)
        for site in _sites(ctx):
            literal = site.literal
            if id(literal) in seen:
                continue
            seen.add(id(literal))
            if (
                ctx.facts.rank_guard(literal) is not None
                or _on_single_process_path(ctx, literal)
                or _default_overridden_per_rank(ctx, literal)
                or _in_per_rank_table(ctx, literal)
            ):
                continue
            fix = None
            rank_var = local_rank_names.at(literal)
            if rank_var is not None:
                if isinstance(literal, cst.SimpleString):
                    quote = literal.quote
                    text = f"f{quote}cuda:{{{rank_var}}}{quote}"
                else:
                    text = rank_var
                fix = FixSpec(
                    f"Use the local rank `{rank_var}`",
                    replacements=((literal, text),),
                    applicability=Applicability.UNSAFE,
                )
            yield Finding(
                literal,
                f"Hard-coded CUDA device {_shown(site)}: every process of a node uses the "
                'same GPU (out of memory, or NCCL "Duplicate GPU detected"); '
                "use the local rank",
                fix=fix,
            )

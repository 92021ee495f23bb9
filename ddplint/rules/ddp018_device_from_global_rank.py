"""DDP018: the CUDA device chosen from the global rank instead of the local rank.

Also holds the rank classification (global / local) that DDP019 and DDP020 share.
"""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from ddplint.context import Binding, FileContext
from ddplint.diagnostics import Severity
from ddplint.facts import DDP_CLASSES, argument, environ_key, keyword, last_name, string_value
from ddplint.names import dotted
from ddplint.rule import Finding, Rule, register

GLOBAL = "global"
LOCAL = "local"

_GLOBAL_ENV = frozenset({"RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"})
_LOCAL_ENV = frozenset(
    {"LOCAL_RANK", "SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID"}
)
_GLOBAL_FUNCTIONS = frozenset({"get_rank", "get_global_rank", "global_rank"})
_LOCAL_FUNCTIONS = frozenset({"get_local_rank", "get_node_local_rank", "local_rank"})
_GLOBAL_ATTRIBUTES = frozenset({"rank", "global_rank", "world_rank"})
LOCAL_NAMES = frozenset({"local_rank", "localrank", "local_rank_id", "ddp_local_rank"})
_SPAWNERS = frozenset(
    {
        "torch.multiprocessing.spawn",
        "torch.multiprocessing.start_processes",
        "torch.multiprocessing.Process",
        "multiprocessing.Process",
    }
)


def _strip_conversion(expr: cst.BaseExpression) -> cst.BaseExpression:
    while (
        isinstance(expr, cst.Call)
        and isinstance(expr.func, cst.Name)
        and expr.func.value in ("int", "str")
        and expr.args
    ):
        expr = expr.args[0].value
    return expr


def reaching(ctx: FileContext, name: str, at: cst.CSTNode) -> Binding | None:
    """The binding of `name` that reaches `at`, not counting the statement holding `at`
    (`model = DDP(model)`: the `model` read is the previous one). Works around
    `DDPFacts.reaching_binding`, which counts a binding whose statement encloses `at`."""
    return ctx.facts.reaching_binding(name, ctx.statement(at))


def spawn_targets(ctx: FileContext) -> set[str]:
    """Names of functions started by `mp.spawn` / `Process(target=...)`: their rank
    parameter is a spawn index, local and global at once on one node."""
    found: set[str] = set()
    for call in ctx.calls:
        if ctx.call_name(call) not in _SPAWNERS:
            continue
        target = argument(call, 0, "fn")
        target_kw = keyword(call, "target")
        if target_kw is not None:
            target = target_kw.value
        if target is not None:
            name = last_name(target)
            if name:
                found.add(name)
    return found


class RankClassifier:
    """Whether an expression holds the global rank or the local rank of this process."""

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        self.spawned = spawn_targets(ctx)

    def kind(self, expr: cst.BaseExpression, at: cst.CSTNode | None = None, depth: int = 5):
        """GLOBAL, LOCAL or None (unknown, or a spawn index)."""
        ctx = self.ctx
        expr = _strip_conversion(expr)
        if depth < 0:
            return None
        if isinstance(expr, cst.BinaryOperation):
            if isinstance(expr.operator, cst.Modulo) and self.kind(expr.left, at, depth - 1):
                return LOCAL
            return None
        key = environ_key(ctx, expr)
        if key is not None:
            if key in _GLOBAL_ENV:
                return GLOBAL
            return LOCAL if key in _LOCAL_ENV else None
        if isinstance(expr, cst.Call):
            func = last_name(expr.func)
            if func in _GLOBAL_FUNCTIONS and not expr.args:
                return GLOBAL
            if func in _LOCAL_FUNCTIONS:
                return LOCAL
            return None
        name = dotted(expr)
        if name is None:
            return None
        last = name.rpartition(".")[2]
        if last in LOCAL_NAMES:
            return LOCAL
        binding = reaching(ctx, name, at if at is not None else expr)
        if binding is None:
            if "." in name and last in _GLOBAL_ATTRIBUTES and not name.startswith("self."):
                return GLOBAL
            return None
        return self._binding_kind(binding, depth - 1)

    def _binding_kind(self, binding: Binding, depth: int):
        if binding.kind == "assign":
            return self.kind(binding.value, binding.statement, depth)
        if binding.kind != "param":
            return None
        func = binding.scope
        if isinstance(func, cst.FunctionDef) and func.name.value in self.spawned:
            return None
        kinds = {self.kind(a, a, depth) for a in self.ctx.facts.arguments_for(binding)}
        if GLOBAL in kinds:
            return GLOBAL
        return LOCAL if kinds == {LOCAL} else None

    def is_global(self, expr: cst.BaseExpression, at: cst.CSTNode | None = None) -> bool:
        return self.kind(expr, at) == GLOBAL

    def is_local(self, expr: cst.BaseExpression, at: cst.CSTNode | None = None) -> bool:
        return self.kind(expr, at) == LOCAL

    def device_kind(self, expr: cst.BaseExpression, at: cst.CSTNode, depth: int = 4):
        """GLOBAL/LOCAL for a device given as a rank, `f"cuda:{rank}"`,
        `"cuda:{}".format(rank)`, `"cuda:%d" % rank`, or a name bound to one of them."""
        kind = self.kind(expr, at)
        if kind is not None or depth == 0:
            return kind
        index = _device_string_index(expr)
        if index is not None:
            return self.kind(index, at)
        name = dotted(expr)
        if name is None:
            return None
        binding = reaching(self.ctx, name, at)
        if binding is None or binding.kind != "assign":
            return None
        value = binding.value
        if _device_string_index(value) is None and dotted(value) is None:
            return None
        return self.device_kind(value, binding.statement, depth - 1)


def local_rank_in_scope(ctx: FileContext, call: cst.Call, ranks: RankClassifier) -> str | None:
    """A name holding the local rank that is bound before `call` in its scope (or at module
    level)."""
    scope = ctx.scope(call)
    best: Binding | None = None
    for name, bindings in ctx.bindings.items():
        if "rank" not in name and "gpu" not in name:
            continue
        for binding in bindings:
            if binding.scope is not scope and binding.scope is not ctx.module:
                continue
            if binding.kind != "param" and not ctx.before(binding.statement, call):
                continue
            if binding.kind == "param" and binding.scope is not scope:
                continue
            named_local = name.rpartition(".")[2] in LOCAL_NAMES
            if not named_local and (
                binding.kind != "assign" or ranks.kind(binding.value, binding.statement) != LOCAL
            ):
                continue
            if best is None or ctx.before(best.statement, binding.statement):
                best = binding
    return best.target if best is not None else None


def _device_string_index(expr: cst.BaseExpression) -> cst.BaseExpression | None:
    """`rank` for `f"cuda:{rank}"`, `"cuda:{}".format(rank)`, `"cuda:%d" % rank`."""
    if isinstance(expr, cst.FormattedString):
        parts = expr.parts
        if (
            len(parts) == 2
            and isinstance(parts[0], cst.FormattedStringText)
            and parts[0].value == "cuda:"
            and isinstance(parts[1], cst.FormattedStringExpression)
        ):
            return parts[1].expression
        return None
    if (
        isinstance(expr, cst.Call)
        and isinstance(expr.func, cst.Attribute)
        and expr.func.attr.value == "format"
        and string_value(expr.func.value) == "cuda:{}"
        and len(expr.args) == 1
    ):
        return expr.args[0].value
    if (
        isinstance(expr, cst.BinaryOperation)
        and isinstance(expr.operator, cst.Modulo)
        and string_value(expr.left) in ("cuda:%d", "cuda:%s", "cuda:%i")
    ):
        return expr.right
    return None


def device_arguments(ctx: FileContext, call: cst.Call) -> Iterator[cst.BaseExpression]:
    """The expressions a call uses to choose a CUDA device: `set_device(x)`,
    `torch.cuda.device(x)`, `torch.device("cuda", x)` / `torch.device(x)`, `.to(x)`,
    `.cuda(x)`, `DDP(device_ids=[x], output_device=x)`."""
    name = ctx.call_name(call)
    if name in ("torch.cuda.set_device", "torch.cuda.device"):
        value = argument(call, 0, "device")
        if value is not None:
            yield value
        return
    if name == "torch.device":
        index = argument(call, 1, "index")
        if index is not None:
            yield index
        else:
            value = argument(call, 0, "type")
            if value is not None:
                yield value
        return
    if name in DDP_CLASSES:
        ids = argument(call, 1, "device_ids")
        if isinstance(ids, (cst.List, cst.Tuple)):
            for element in ids.elements:
                yield element.value
        output = keyword(call, "output_device")
        if output is not None:
            yield output.value
        return
    if name is None and isinstance(call.func, cst.Attribute):
        method = call.func.attr.value
        if method in ("to", "cuda"):
            value = argument(call, 0, "device")
            if value is not None:
                yield value


def is_device_count(ctx: FileContext, expr: cst.BaseExpression, depth: int = 4) -> bool:
    """`torch.cuda.device_count()` (maybe `int(...)`), or a name bound to it."""
    while (
        isinstance(expr, cst.Call)
        and isinstance(expr.func, cst.Name)
        and expr.func.value == "int"
        and expr.args
    ):
        expr = expr.args[0].value
    if isinstance(expr, cst.Call):
        return ctx.call_name(expr) == "torch.cuda.device_count"
    name = dotted(expr)
    if name is None or depth == 0:
        return False
    binding = reaching(ctx, name, expr)
    if binding is None or binding.kind != "assign":
        return False
    return is_device_count(ctx, binding.value, depth - 1)


def single_node_group(ctx: FileContext, ranks: RankClassifier) -> tuple[bool, bool]:
    """Whether `init_process_group` itself gets the local rank / the local GPU count."""
    local_group = one_node_group = False
    for call in ctx.calls_to("torch.distributed.init_process_group"):
        rank = keyword(call, "rank")
        if rank is not None and ranks.kind(rank.value, call) == LOCAL:
            local_group = True
        size = keyword(call, "world_size")
        if size is not None and is_device_count(ctx, size.value):
            one_node_group = True
    return local_group, one_node_group


@register
class DeviceFromGlobalRank(Rule):
    code = "DDP018"
    name = "device-from-global-rank"
    severity = Severity.ERROR
    summary = "CUDA device chosen from the global rank instead of the local rank"
    explanation = """
## What it does
Flags a CUDA device chosen from the *global* rank (`dist.get_rank()`,
`os.environ["RANK"]`, `args.rank`, or a name bound to them): `torch.cuda.set_device(rank)`,
`torch.device(f"cuda:{rank}")`, `torch.device("cuda", rank)`, `.to(rank)`, `.cuda(rank)`,
`DDP(model, device_ids=[rank])`.

## Why is this bad?
The global rank numbers every process of the job; GPU indices restart at 0 on every node.
On one node both agree, so the script works in testing. On the second node of an 8-GPU job
the ranks are 8 to 15: `cuda:8` does not exist and CUDA raises "invalid device ordinal"
(or, with fewer processes than GPUs per node, processes pick the wrong GPU and may share
one). The local rank (`LOCAL_RANK`, set by torchrun) is the GPU index on the node.

Not flagged: local-rank values (`LOCAL_RANK`, `args.local_rank`, `local_rank`),
`rank % torch.cuda.device_count()`, and the rank parameter of an `mp.spawn` worker, which is
the process index on one node.

## Example
```python
rank = dist.get_rank()
torch.cuda.set_device(rank)
model = DDP(model.to(rank), device_ids=[rank])
```

## Use instead
```python
local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
model = DDP(model.to(local_rank), device_ids=[local_rank])
```

## Fix safety
No automatic fix: the right local-rank variable depends on the launcher.

## References
- https://pytorch.org/docs/stable/elastic/run.html (environment variables set by torchrun)
- https://pytorch.org/tutorials/intermediate/ddp_tutorial.html
"""
    flag = (
        """import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("nccl")
rank = dist.get_rank()
torch.cuda.set_device(rank)
model = DDP(torch.nn.Linear(4, 4).cuda(), device_ids=[rank])
""",
        """import os
import torch
import torch.distributed as dist

def main():
    rank = int(os.environ["RANK"])
    dist.init_process_group("nccl")
    device = torch.device(f"cuda:{rank}")
    return torch.nn.Linear(2, 2).to(device)
""",
        """import argparse
import torch
import torch.distributed as dist
from torch import nn

parser = argparse.ArgumentParser()
parser.add_argument("--rank", type=int, default=0)
args = parser.parse_args()
dist.init_process_group("nccl", rank=args.rank)
model = nn.parallel.DistributedDataParallel(nn.Linear(2, 2).cuda(args.rank))
""",
    )
    allow = (
        """import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
dist.init_process_group("nccl")
rank = dist.get_rank()
model = DDP(torch.nn.Linear(4, 4).cuda(local_rank), device_ids=[local_rank])
""",
        """import torch
import torch.distributed as dist

dist.init_process_group("nccl")
rank = dist.get_rank()
device = rank % torch.cuda.device_count()
torch.cuda.set_device(device)
""",
        """import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP

def worker(rank, world_size):
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    torch.cuda.set_device(rank)
    model = DDP(torch.nn.Linear(4, 4).to(rank), device_ids=[rank])
    dist.destroy_process_group()

if __name__ == "__main__":
    world_size = torch.cuda.device_count()
    mp.spawn(worker, args=(world_size,), nprocs=world_size)
""",
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        ranks = RankClassifier(ctx)
        if any(single_node_group(ctx, ranks)):
            return
        for call in ctx.calls:
            if not call.args:
                continue
            for value in device_arguments(ctx, call):
                if ranks.device_kind(value, call) == GLOBAL:
                    yield Finding(
                        call,
                        f"device chosen from the global rank (`{ctx.code(value)}`): right only "
                        "on a single node; on other nodes the global rank exceeds the GPU "
                        "count (invalid device ordinal) or names the wrong GPU. Use the local "
                        "rank (LOCAL_RANK)",
                    )
                    break

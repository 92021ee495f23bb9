"""Global versus local rank: which of the two an expression holds."""

from __future__ import annotations

import re

import libcst as cst

from ddplint.analysis.devices import device_string_index, is_device_count
from ddplint.context import Binding, FileContext
from ddplint.domain.apis import DEVICE_MESH_BUILDERS, GLOBAL_RANK_ENV, LOCAL_RANK_ENV, MESH_NAME
from ddplint.facts import argument, environ_key, keyword, last_name, strip_conversion
from ddplint.names import dotted

GLOBAL = "global"
LOCAL = "local"

_GLOBAL_FUNCTIONS = frozenset({"get_rank", "get_global_rank", "global_rank"})
_LOCAL_FUNCTIONS = frozenset({"get_local_rank", "get_node_local_rank", "local_rank"})
_GLOBAL_ATTRIBUTES = frozenset({"rank", "global_rank", "world_rank"})
# `local_rank`, `localrank`, `local_rank_id`, `ddp_local_rank`: named for the local rank.
LOCAL_RANK_NAME = re.compile(r"^(ddp_)?local_?rank(_id)?$")
_SPAWNERS = frozenset(
    {
        "torch.multiprocessing.spawn",
        "torch.multiprocessing.start_processes",
        "torch.multiprocessing.Process",
        "multiprocessing.Process",
    }
)


def _spawn_targets(ctx: FileContext) -> set[str]:
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
        self.spawned = _spawn_targets(ctx)

    def kind(
        self, expr: cst.BaseExpression, at: cst.CSTNode | None = None, depth: int = 5
    ) -> str | None:
        """GLOBAL, LOCAL or None (unknown, or a spawn index)."""
        ctx = self.ctx
        expr = strip_conversion(expr, ("int", "str"))
        if depth < 0:
            return None
        if isinstance(expr, cst.BinaryOperation):
            if isinstance(expr.operator, cst.Modulo) and self.kind(expr.left, at, depth - 1):
                return LOCAL
            return None
        key = environ_key(ctx, expr)
        if key is not None:
            if key in GLOBAL_RANK_ENV:
                return GLOBAL
            return LOCAL if key in LOCAL_RANK_ENV else None
        if isinstance(expr, cst.Call):
            func = last_name(expr.func)
            if func in _GLOBAL_FUNCTIONS and not expr.args:
                return GLOBAL
            if func in _LOCAL_FUNCTIONS and not self._mesh_coordinate(expr, depth):
                return LOCAL
            return None
        name = dotted(expr)
        if name is None:
            return None
        last = name.rpartition(".")[2]
        if LOCAL_RANK_NAME.match(last):
            return LOCAL
        binding = ctx.facts.binding_before(name, at if at is not None else expr)
        if binding is None:
            if "." in name and last in _GLOBAL_ATTRIBUTES and not name.startswith("self."):
                return GLOBAL
            return None
        return self._binding_kind(binding, depth - 1)

    def _mesh_coordinate(self, call: cst.Call, depth: int) -> bool:
        """`x.get_local_rank(mesh_dim=...)`, `x.get_local_rank("dp")`,
        `mesh["dp"].get_local_rank()`: a rank along one dimension of a device mesh (a mesh
        subscript, a name for a mesh or bound to one), not the node-local rank."""
        if not isinstance(call.func, cst.Attribute):
            return False
        dim = argument(call, 0, "mesh_dim")
        if keyword(call, "mesh_dim") is not None or isinstance(dim, cst.SimpleString):
            return True
        return self._is_mesh(call.func.value, call, depth)

    def _is_mesh(self, expr: cst.BaseExpression, at: cst.CSTNode, depth: int) -> bool:
        if isinstance(expr, cst.Subscript):
            return True  # `mesh["dp"]`: a submesh (torch.distributed is not indexed)
        if isinstance(expr, cst.Call):
            return self.ctx.call_name(expr) in DEVICE_MESH_BUILDERS
        name = dotted(expr)
        if name is None:
            return False
        if MESH_NAME.search(name.rpartition(".")[2]):
            return True
        binding = self.ctx.facts.binding_before(name, at)
        if binding is None or binding.kind != "assign" or depth <= 0:
            return False
        return self._is_mesh(binding.value, binding.statement, depth - 1)

    def _binding_kind(self, binding: Binding, depth: int) -> str | None:
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

    def device_kind(self, expr: cst.BaseExpression, at: cst.CSTNode, depth: int = 4) -> str | None:
        """GLOBAL/LOCAL for a device given as a rank, `f"cuda:{rank}"`,
        `"cuda:{}".format(rank)`, `"cuda:%d" % rank`, or a name bound to one of them."""
        kind = self.kind(expr, at)
        if kind is not None or depth == 0:
            return kind
        index = device_string_index(expr)
        if index is not None:
            return self.kind(index, at)
        name = dotted(expr)
        if name is None:
            return None
        binding = self.ctx.facts.binding_before(name, at)
        if binding is None or binding.kind != "assign":
            return None
        value = binding.value
        if device_string_index(value) is None and dotted(value) is None:
            return None
        return self.device_kind(value, binding.statement, depth - 1)


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

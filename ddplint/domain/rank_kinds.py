"""Which rank a rank value holds: the global rank (`RANK`, `dist.get_rank()`, `args.rank`)
or the local rank (`LOCAL_RANK`, `local_rank`, `rank % ngpus_per_node`), the refinement of
`Ranks.is_rank_value` that device and sampler rules ask.

A name is followed through the value resolver one step at a time, so that a value spelled
for one kind (`local_rank`) decides without following what it was assigned from. Of the
values a name may hold, constants (`0`, `-1`, `None`: a rank in no run) are left out; one
global value makes it global, local values only make it local. A call of a project function
named for a rank (`get_local_rank()`) is what its body returns where that is known (in this
file, or another module's summary through `elsewhere`); the name decides only otherwise.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Iterable
from functools import cached_property

import libcst as cst

from ddplint.domain.apis import (
    DEVICE_MESH_BUILDERS,
    GLOBAL_RANK_ENV,
    LOCAL_RANK_ENV,
    MESH_NAME,
    PROCESS_STARTERS,
)
from ddplint.domain.ranks import int_literal, last_name, strip_conversion
from ddplint.engine import Resolver
from ddplint.engine.resolve import argument
from ddplint.names import dotted

_GLOBAL_FUNCTIONS = frozenset({"get_rank", "get_global_rank", "global_rank"})
_LOCAL_FUNCTIONS = frozenset({"get_local_rank", "get_node_local_rank", "local_rank"})
RANK_FUNCTIONS = _GLOBAL_FUNCTIONS | _LOCAL_FUNCTIONS  # functions named for a rank
_GLOBAL_ATTRIBUTES = frozenset({"rank", "global_rank", "world_rank"})
# `local_rank`, `localrank`, `local_rank_id`, `ddp_local_rank`: named for the local rank.
LOCAL_RANK_NAME = re.compile(r"^(ddp_)?local_?rank(_id)?$")


class RankKind(enum.Enum):
    GLOBAL = "global"
    LOCAL = "local"


class _Follow(enum.Enum):
    """`_spelled`: the expression spells no kind itself; the values it holds tell."""

    FOLLOW = "follow"


_FOLLOW = _Follow.FOLLOW


class RankKinds:
    """Global or local rank, for the expressions of one file."""

    def __init__(
        self,
        resolver: Resolver,
        elsewhere: Callable[[cst.Call], RankKind | None] | None = None,
    ) -> None:
        self.resolver = resolver
        self.elsewhere = elsewhere  # what a function of another project module returns

    def kind(
        self, expr: cst.BaseExpression, at: cst.CSTNode | None = None, depth: int = 5
    ) -> RankKind | None:
        """GLOBAL, LOCAL, or None (not a rank, unknown, or the index `mp.spawn` passes,
        local and global at once on one node)."""
        expr = strip_conversion(expr, ("int", "str"))
        where = expr if at is None else at
        if depth < 0:
            return None
        spelled = self._spelled(expr, where, depth)
        if spelled is not _FOLLOW:
            return spelled
        if self._spawn_index(expr, where):
            return None
        held = [v for v in self.resolver.values(expr, where, 1) if v.expr is not expr]
        if not held:
            name = dotted(expr) or ""
            last = name.rpartition(".")[2]
            if "." in name and last in _GLOBAL_ATTRIBUTES and not name.startswith("self."):
                return RankKind.GLOBAL  # `args.rank`, `cfg.dist.rank`
            return None
        here = self.resolver.model.frame(where)
        values = [v for v in held if not _is_constant(v.expr)]
        kinds = [self.kind(v.expr, v.at, depth - 1) for v in values]
        if any(
            kind is RankKind.GLOBAL and self.resolver.model.frame(v.at) is not here
            for v, kind in zip(values, kinds, strict=True)
        ):
            return RankKind.GLOBAL  # a caller passes the global rank
        return combined(kinds)

    def _spelled(
        self, expr: cst.BaseExpression, at: cst.CSTNode, depth: int
    ) -> RankKind | _Follow | None:
        """The kind `expr` itself spells, None when it spells none, `_FOLLOW` when only
        the values it holds can tell."""
        if type(expr) is cst.BinaryOperation:
            modulo = type(expr.operator) is cst.Modulo
            return RankKind.LOCAL if modulo and self.kind(expr.left, at, depth - 1) else None
        key = self.resolver.direct_environ_key(expr, expr)
        if key is not None:
            if key in GLOBAL_RANK_ENV:
                return RankKind.GLOBAL
            return RankKind.LOCAL if key in LOCAL_RANK_ENV else None
        if type(expr) is cst.Call:
            func = last_name(expr.func)
            body = self._body_kind(expr, depth) if func in RANK_FUNCTIONS else None
            if body is not None:
                return body
            if func in _GLOBAL_FUNCTIONS and not expr.args:
                return RankKind.GLOBAL
            if func in _LOCAL_FUNCTIONS and not self._mesh_coordinate(expr):
                return RankKind.LOCAL
            return _FOLLOW  # a helper of this file: what it returns
        if isinstance(expr, (cst.Name, cst.Attribute)):
            if not LOCAL_RANK_NAME.match(last_name(expr) or ""):
                return _FOLLOW
            return RankKind.GLOBAL if self._holds_global_only(expr, at, depth) else RankKind.LOCAL
        return _FOLLOW if isinstance(expr, (cst.IfExp, cst.Subscript)) else None

    def _holds_global_only(self, expr: cst.BaseExpression, at: cst.CSTNode, depth: int) -> bool:
        """A name for the local rank that holds only the global rank as torch or the
        environment gives it (`local_rank = dist.get_rank()`, `self.local_rank = local_rank`
        after it): the value, not the name, decides."""
        if depth < 0:
            return False
        values = [
            v
            for v in self.resolver.values(expr, at, 1)
            if v.expr is not expr and not _is_constant(v.expr)
        ]
        return bool(values) and all(self._global_source(v.expr, v.at, depth) for v in values)

    def _global_source(self, expr: cst.BaseExpression, at: cst.CSTNode, depth: int) -> bool:
        expr = strip_conversion(expr, ("int", "str"))
        if type(expr) is cst.Call:
            qualified = self.resolver.model.imports.resolve(expr.func)
            return qualified == "torch.distributed.get_rank" and not expr.args
        if self.resolver.direct_environ_key(expr, expr) in GLOBAL_RANK_ENV:
            return True
        named = isinstance(expr, (cst.Name, cst.Attribute))
        return (
            named
            and LOCAL_RANK_NAME.match(last_name(expr) or "") is not None
            and (self._holds_global_only(expr, at, depth - 1))
        )

    def returned_kind(self, func: cst.FunctionDef, depth: int = 5) -> RankKind | None:
        """The kind of rank `func` returns, its constant returns (`return 0` when no
        process group exists) left out; None if one of the others has no known kind
        (`dist.get_rank(group=local_group)`)."""
        returns = self.resolver.model.returns.get(func, [])
        values = [(r.value, r) for r in returns if r.value and not _is_constant(r.value)]
        kinds = [self.kind(value, at, depth) for value, at in values]
        return None if None in kinds else combined(kinds)

    def _body_kind(self, call: cst.Call, depth: int) -> RankKind | None:
        """What the project function `call` runs returns: one of this file, else one of
        another module (`elsewhere`); None when neither is known."""
        callees = self.resolver.callees(call)
        if callees:
            return combined(self.returned_kind(f, depth - 1) for f in callees)
        return self.elsewhere(call) if self.elsewhere is not None else None

    @cached_property
    def _spawned(self) -> frozenset[str]:
        return spawned_functions(self.resolver)

    def _spawn_index(self, expr: cst.BaseExpression, at: cst.CSTNode) -> bool:
        """A parameter of a function `mp.spawn` starts: the process index."""
        if type(expr) is not cst.Name or not self._spawned:
            return False
        return any(
            b.kind == "param"
            and type(b.owner) is cst.FunctionDef
            and b.owner.name.value in self._spawned
            for b in self.resolver.reaching(expr.value, at)
        )

    def _mesh_coordinate(self, call: cst.Call) -> bool:
        """`x.get_local_rank(mesh_dim=...)`, `x.get_local_rank("dp")`,
        `mesh["dp"].get_local_rank()`: a rank along one dimension of a device mesh (a mesh
        subscript, a name for a mesh or bound to one), not the node-local rank."""
        if type(call.func) is not cst.Attribute:
            return False
        dim = argument(call, 0, "mesh_dim")
        if argument(call, None, "mesh_dim") is not None or type(dim) is cst.SimpleString:
            return True
        return any(self._is_mesh(v.expr) for v in self.resolver.values(call.func.value, call))

    def _is_mesh(self, expr: cst.BaseExpression) -> bool:
        if type(expr) is cst.Subscript:
            return True  # `mesh["dp"]`: a submesh (torch.distributed is not indexed)
        if type(expr) is cst.Call:
            return self.resolver.model.imports.resolve(expr.func) in DEVICE_MESH_BUILDERS
        name = last_name(expr)
        return name is not None and bool(MESH_NAME.search(name))


def combined(kinds: Iterable[RankKind | None]) -> RankKind | None:
    """One kind for several possible values: GLOBAL if one is global and none local,
    LOCAL if all are local, else None (a local rank with a global fallback, `LOCAL_RANK`
    if set else `RANK`, is neither)."""
    found = set(kinds)
    if RankKind.GLOBAL in found:
        return None if RankKind.LOCAL in found else RankKind.GLOBAL
    return RankKind.LOCAL if found == {RankKind.LOCAL} else None


def _is_constant(expr: cst.BaseExpression) -> bool:
    return int_literal(expr) is not None or (type(expr) is cst.Name and expr.value == "None")


def spawned_functions(resolver: Resolver) -> frozenset[str]:
    """The names of the functions the file starts with `mp.spawn` / `Process(target=...)`."""
    model = resolver.model
    found: set[str] = set()
    for call in model.calls:
        if model.imports.resolve(call.func) not in PROCESS_STARTERS:
            continue
        target = argument(call, None, "target") or argument(call, 0, "fn")
        name = last_name(target) if target is not None else None
        if name:
            found.add(name)
    return frozenset(found)

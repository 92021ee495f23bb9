"""Where a script replaces the rendezvous port its launcher exported, before a process
group that takes its rank from that launcher."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain.apis import GLOBAL_RANK_ENV, WORLD_SIZE_ENV
from ddplint.engine.resolve import argument

PORT = "MASTER_PORT"
_INIT = "torch.distributed.init_process_group"
_ENV_METHOD = "env://"
# init_process_group(backend, init_method, timeout, world_size, rank, store, ...)
_INIT_METHOD, _RANK, _STORE = 1, 4, 5


@dataclass(frozen=True)
class PortOverwrite:
    """`assign` sets MASTER_PORT to `value` on every run of its function, before `init`
    meets through the environment with the launcher's rank."""

    assign: cst.Assign
    environ: cst.BaseExpression  # the `os.environ` written to
    value: cst.BaseExpression
    init: cst.Call


def port_overwrites(ctx: FileContext) -> list[PortOverwrite]:
    """`os.environ["MASTER_PORT"] = <constant>` statements, not under a test of the port,
    followed in the same function by an `init_process_group` that reads RANK from the
    environment, in a file that never sets the rank or world-size variables itself (so a
    launcher set them, and with them the port it serves)."""
    inits = [c for c in ctx.calls_to(_INIT) if _rank_from_launcher(ctx, c)]
    if not inits or _sets_rank_environment(ctx):
        return []
    found = []
    for node in ctx.nodes_of(cst.Assign):
        assert isinstance(node, cst.Assign)
        target = _port_target(ctx, node)
        if target is None or not _constant(ctx, node.value) or _asks_port(ctx, node):
            continue
        frame = ctx.scope(node)
        init = next(
            (c for c in inits if ctx.scope(c) is frame and ctx.before(node, c)),
            None,
        )
        if init is not None:
            found.append(PortOverwrite(node, target.value, node.value, init))
    return found


def _asks_port(ctx: FileContext, write: cst.Assign) -> bool:
    """`write` runs under a test of the port itself (`if "MASTER_PORT" not in os.environ:`,
    `if not os.getenv("MASTER_PORT"):`): it fills in a missing port."""
    return any(PORT in ctx.code(c.test) for c in ctx.flow.conditions(write))


def _port_target(ctx: FileContext, assign: cst.Assign) -> cst.Subscript | None:
    """The `os.environ["MASTER_PORT"]` target of `assign` (the process's own environment,
    not a copy made for a child)."""
    if len(assign.targets) != 1:
        return None
    target = assign.targets[0].target
    if not isinstance(target, cst.Subscript) or _key(target) != PORT:
        return None
    return target if ctx.model.imports.resolve(target.value) == "os.environ" else None


def _key(subscript: cst.Subscript) -> str | None:
    if len(subscript.slice) != 1:
        return None
    index = subscript.slice[0].slice
    if isinstance(index, cst.Index) and isinstance(index.value, cst.SimpleString):
        return index.value.evaluated_value if isinstance(index.value.evaluated_value, str) else None
    return None


def _constant(ctx: FileContext, value: cst.BaseExpression) -> bool:
    """A port written in the code: a literal, or `str()` of one, directly or through names
    all of whose values are such."""
    values = [v for v in ctx.resolver.values(value, value) if v.leaf]
    if not values:
        return False
    for found in values:
        expr = found.expr
        if _is_str_call(expr):
            assert isinstance(expr, cst.Call)
            inner = [v for v in ctx.resolver.values(expr.args[0].value, expr) if v.leaf]
            if not inner or not all(isinstance(v.expr, cst.Integer) for v in inner):
                return False
        elif not isinstance(expr, cst.SimpleString | cst.Integer):
            return False
    return True


def _is_str_call(expr: cst.BaseExpression) -> bool:
    return (
        isinstance(expr, cst.Call)
        and isinstance(expr.func, cst.Name)
        and expr.func.value == "str"
        and len(expr.args) == 1
    )


def _rank_from_launcher(ctx: FileContext, init: cst.Call) -> bool:
    """`init` meets through the environment (`env://`, the default) and is handed no rank
    or store: RANK comes from the environment."""
    if any(a.star for a in init.args):
        return False
    if any(argument(init, p, n) is not None for p, n in _GIVEN):
        return False
    method = argument(init, _INIT_METHOD, "init_method")
    if method is None:
        return True
    return isinstance(method, cst.SimpleString) and method.evaluated_value == _ENV_METHOD


_GIVEN = ((_RANK, "rank"), (_STORE, "store"))


def _sets_rank_environment(ctx: FileContext) -> bool:
    """The file writes a rank or world-size variable into some environment (its own, or
    one made for a child: `env["RANK"] = ...`, `{"RANK": ...}`, `dict(os.environ,
    RANK=...)`, `setdefault("RANK", ...)`): it launches its processes itself."""
    written = GLOBAL_RANK_ENV | WORLD_SIZE_ENV
    for node in ctx.nodes_of(cst.Arg):
        assert isinstance(node, cst.Arg)
        if node.keyword is not None and node.keyword.value in written:
            return True
    for node in ctx.nodes_of(cst.SimpleString):
        assert isinstance(node, cst.SimpleString)
        if node.evaluated_value in written and _written_there(ctx, node):
            return True
    return False


def _written_there(ctx: FileContext, key: cst.SimpleString) -> bool:
    """`key` names a variable being set: a subscript assigned to, a dict entry, or the
    first argument of `setdefault`/`putenv`."""
    parent = ctx.parent(key)
    if isinstance(parent, cst.DictElement):
        return parent.key is key
    if isinstance(parent, cst.Index):
        subscript = next(a for a in ctx.ancestors(parent) if isinstance(a, cst.Subscript))
        return isinstance(ctx.parent(subscript), cst.AssignTarget)
    if isinstance(parent, cst.Arg):
        call = ctx.parent(parent)
        return (
            isinstance(call, cst.Call)
            and call.args[0] is parent
            and ctx.code(call.func).rpartition(".")[2] in {"setdefault", "putenv"}
        )
    return False

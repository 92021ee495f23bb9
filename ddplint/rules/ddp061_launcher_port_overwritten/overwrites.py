"""Where a script replaces the rendezvous port its launcher exported, before a process
group that takes its rank from that launcher."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain.apis import GLOBAL_RANK_ENV, WORLD_SIZE_ENV
from ddplint.domain.environment_writes import constant_writes
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
    """`os.environ["MASTER_PORT"] = <constant>` statements, not under a test of the port
    (`environment_writes.constant_writes`), followed in the same function by an
    `init_process_group` that reads RANK from the environment, in a file that never sets
    the rank or world-size variables itself (so a launcher set them, and with them the port
    it serves)."""
    inits = [c for c in ctx.calls_to(_INIT) if _rank_from_launcher(ctx, c)]
    if not inits or _sets_rank_environment(ctx):
        return []
    found = []
    for write in constant_writes(ctx, PORT):
        frame = ctx.scope(write.assign)
        init = next(
            (c for c in inits if ctx.scope(c) is frame and ctx.before(write.assign, c)),
            None,
        )
        if init is not None:
            found.append(PortOverwrite(write.assign, write.environ, write.value, init))
    return found


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
    return type(method) is cst.SimpleString and method.evaluated_value == _ENV_METHOD


_GIVEN = ((_RANK, "rank"), (_STORE, "store"))


def _sets_rank_environment(ctx: FileContext) -> bool:
    """The file writes a rank or world-size variable into some environment (its own, or
    one made for a child: `env["RANK"] = ...`, `{"RANK": ...}`, `dict(os.environ,
    RANK=...)`, `setdefault("RANK", ...)`): it launches its processes itself."""
    written = GLOBAL_RANK_ENV | WORLD_SIZE_ENV
    for node in ctx.nodes_of(cst.Arg):
        assert type(node) is cst.Arg
        if node.keyword is not None and node.keyword.value in written:
            return True
    for node in ctx.nodes_of(cst.SimpleString):
        assert type(node) is cst.SimpleString
        if node.evaluated_value in written and _written_there(ctx, node):
            return True
    return False


def _written_there(ctx: FileContext, key: cst.SimpleString) -> bool:
    """`key` names a variable being set: a subscript assigned to, a dict entry, or the
    first argument of `setdefault`/`putenv`."""
    parent = ctx.parent(key)
    if type(parent) is cst.DictElement:
        return parent.key is key
    if type(parent) is cst.Index:
        subscript = next(a for a in ctx.ancestors(parent) if type(a) is cst.Subscript)
        return type(ctx.parent(subscript)) is cst.AssignTarget
    if type(parent) is cst.Arg:
        call = ctx.parent(parent)
        return (
            type(call) is cst.Call
            and call.args[0] is parent
            and ctx.code(call.func).rpartition(".")[2] in {"setdefault", "putenv"}
        )
    return False

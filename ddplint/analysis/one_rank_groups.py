"""Process groups of one rank: code that sets `WORLD_SIZE` to 1 (`os.environ["WORLD_SIZE"]
= "1"`) or gives a process-group start `world_size=1` (`init_process_group(rank=0,
world_size=1)`, a project helper like `init_distributed_single_host(rank=0, world_size=1)`)
runs a job of one process, whatever it then asks of the group."""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from ddplint.context import FileContext
from ddplint.engine.constants import certainly
from ddplint.engine.resolve import argument
from ddplint.facts import environ_key, keyword

SPAWNS = frozenset({"torch.multiprocessing.spawn", "torch.multiprocessing.start_processes"})


def _is_one(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.Integer):
        return expr.value == "1"
    return isinstance(expr, cst.SimpleString) and expr.evaluated_value == "1"


def _sets_world_size_one(ctx: FileContext, statement: cst.Assign) -> bool:
    return any(
        isinstance(target.target, cst.Subscript) and environ_key(ctx, target.target) == "WORLD_SIZE"
        for target in statement.targets
    ) and certainly(ctx.resolver, statement.value, statement, _is_one)


def one_rank_group(ctx: FileContext, node: cst.CSTNode, starts: Callable[[cst.Call], bool]) -> bool:
    """Within `node`, the world size is set to one: `os.environ["WORLD_SIZE"] = "1"`, or a
    call that `starts` a process group given `world_size=1` (through the value resolver)."""
    for sub in ctx.walk(node):
        if isinstance(sub, cst.Assign) and _sets_world_size_one(ctx, sub):
            return True
        if isinstance(sub, cst.Call):
            size = keyword(sub, "world_size")
            if (
                size is not None
                and certainly(ctx.resolver, size.value, sub, _is_one)
                and starts(sub)
            ):
                return True
    return False


def plays_one_rank(ctx: FileContext, func: cst.FunctionDef) -> bool:
    """`func` gives a call a literal rank (`ShardingEnv.from_local(world_size=2,
    rank=0)`): this one process stands in for that rank of a job."""
    for call in ctx.calls_within(func):
        rank = keyword(call, "rank")
        if rank is not None and isinstance(rank.value, cst.Integer):
            return True
    return False


def spawns_one_process(ctx: FileContext, call: cst.Call) -> bool:
    """`call` is `mp.spawn` / `mp.start_processes` of one process: `nprocs` left at its
    default of 1, or certainly 1 (`world_size = 1` then `nprocs=world_size`)."""
    if ctx.call_name(call) not in SPAWNS or any(arg.star for arg in call.args):
        return False
    count = argument(call, 2, "nprocs")
    return count is None or certainly(ctx.resolver, count, call, _is_one)

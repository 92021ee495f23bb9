"""Process groups of one rank: code that sets `WORLD_SIZE` to 1 (`os.environ["WORLD_SIZE"]
= "1"`) or gives a process-group start `world_size=1` (`init_process_group(rank=0,
world_size=1)`, a project helper like `init_distributed_single_host(rank=0, world_size=1)`)
runs a job of one process, whatever it then asks of the group."""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain.apis import SPAWN_FUNCTIONS
from ddplint.domain.ddp_facts import environ_key, keyword, last_name, string_value
from ddplint.engine.constants import certainly
from ddplint.engine.resolve import argument


def is_one(expr: cst.BaseExpression) -> bool:
    """The literal 1, as a number or a string (`"1"`, as environment variables hold it)."""
    if type(expr) is cst.Integer:
        return expr.value == "1"
    return type(expr) is cst.SimpleString and expr.evaluated_value == "1"


def sets_world_size(ctx: FileContext, statement: cst.Assign) -> bool:
    """`statement` assigns `os.environ["WORLD_SIZE"]`."""
    return any(
        type(target.target) is cst.Subscript and environ_key(ctx, target.target) == "WORLD_SIZE"
        for target in statement.targets
    )


def _sets_world_size_one(ctx: FileContext, statement: cst.Assign) -> bool:
    return sets_world_size(ctx, statement) and certainly(
        ctx.resolver, statement.value, statement, is_one
    )


def one_rank_group(ctx: FileContext, node: cst.CSTNode, starts: Callable[[cst.Call], bool]) -> bool:
    """Within `node`, the world size is set to one: `os.environ["WORLD_SIZE"] = "1"`, or a
    call that `starts` a process group given `world_size=1` (through the value resolver)."""
    for sub in ctx.walk(node):
        if type(sub) is cst.Assign and _sets_world_size_one(ctx, sub):
            return True
        if type(sub) is cst.Call:
            size = keyword(sub, "world_size")
            if (
                size is not None
                and certainly(ctx.resolver, size.value, sub, is_one)
                and starts(sub)
            ):
                return True
    return False


def plays_one_rank(ctx: FileContext, func: cst.FunctionDef) -> bool:
    """`func` gives a call a literal rank (`ShardingEnv.from_local(world_size=2,
    rank=0)`): this one process stands in for that rank of a job."""
    for call in ctx.calls_within(func):
        rank = keyword(call, "rank")
        if rank is not None and type(rank.value) is cst.Integer:
            return True
    return False


def spawns_one_process(ctx: FileContext, call: cst.Call) -> bool:
    """`call` is `mp.spawn` / `mp.start_processes` of one process: `nprocs` left at its
    default of 1, or certainly 1 (`world_size = 1` then `nprocs=world_size`)."""
    if ctx.call_name(call) not in SPAWN_FUNCTIONS or any(arg.star for arg in call.args):
        return False
    count = argument(call, 2, "nprocs")
    return count is None or certainly(ctx.resolver, count, call, is_one)


def spawn_factors(ctx: FileContext, func: cst.FunctionDef) -> tuple[tuple[str, int], ...]:
    """The parameters of `func` (name, position) whose product is the number of processes
    a spawn inside it starts, also in the functions it nests (`world_size = tp * pp * dp`
    then `mp.spawn(..., nprocs=world_size)` in a decorator factory `init_distributed(tp,
    dp, pp)`); () when the count is anything else."""
    params = [p.name.value for p in (*func.params.posonly_params, *func.params.params)]
    for call in ctx.walk(func):
        if type(call) is not cst.Call or ctx.call_name(call) not in SPAWN_FUNCTIONS:
            continue
        count = argument(call, 2, "nprocs")
        for value in ctx.resolver.values(count, call) if count is not None else ():
            names = _factors(value.expr)
            if names and all(name in params for name in names):
                return tuple((name, params.index(name)) for name in names)
    return ()


def _factors(expr: cst.BaseExpression) -> list[str]:
    if type(expr) is cst.Name:
        return [expr.value]
    if type(expr) is cst.BinaryOperation and type(expr.operator) is cst.Multiply:
        left, right = _factors(expr.left), _factors(expr.right)
        return [*left, *right] if left and right else []
    return []


def launches_one_process(
    ctx: FileContext, call: cst.Call, factors: tuple[tuple[str, int], ...]
) -> bool:
    """`call` gives every spawn factor of its callee (`spawn_factors`) the value 1
    (`init_distributed(tp=1, dp=1, pp=1)`)."""
    values = [argument(call, position, name) for name, position in factors]
    return bool(factors) and all(
        v is not None
        and (certainly(ctx.resolver, v, call, is_one) or _parametrized_one(ctx, v, call))
        for v in values
    )


def _parametrized_one(ctx: FileContext, expr: cst.BaseExpression, at: cst.CSTNode) -> bool:
    """`expr` is a parameter of the test around `at` that every row of its
    `@pytest.mark.parametrize("tp,dp,pp", [(1, 1, 1)])` gives the literal 1."""
    func = ctx.enclosing_function(at)
    if type(expr) is not cst.Name or func is None:
        return False
    if not all(b.kind == "param" for b in ctx.resolver.reaching(expr.value, at)):
        return False
    for decorator in func.decorators:
        marker = decorator.decorator
        if type(marker) is not cst.Call or last_name(marker.func) != "parametrize":
            continue
        names = [n.strip() for n in (string_value(marker.args[0].value) or "").split(",")]
        rows = marker.args[1].value if len(marker.args) > 1 else None
        if expr.value not in names or not isinstance(rows, (cst.List, cst.Tuple)):
            continue
        index = names.index(expr.value)
        return bool(rows.elements) and all(
            is_one(_row_item(row.value, index, len(names))) for row in rows.elements
        )
    return False


def _row_item(row: cst.BaseExpression, index: int, width: int) -> cst.BaseExpression:
    """Item `index` of a parametrize row of `width` names (the row itself for one)."""
    if width > 1 and isinstance(row, (cst.Tuple, cst.List)) and len(row.elements) == width:
        return row.elements[index].value
    return row

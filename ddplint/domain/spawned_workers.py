"""Workers a script starts with `mp.spawn` (each in a fresh interpreter): the calls that
start them (directly, or through a project helper handed the worker function), the worker
function of this file each one runs, and the code that runs only in the starting process."""

from __future__ import annotations

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain.apis import SPAWN_FUNCTIONS
from ddplint.domain.project_view import project_of
from ddplint.engine.resolve import argument


def spawns(ctx: FileContext) -> list[cst.Call]:
    """`mp.spawn(worker, ...)` calls, and calls of project helpers that start processes
    given a function of this file to run (`launch(main_worker, ngpus, ...)`)."""
    project = project_of(ctx)
    found = list(ctx.calls_to(*SPAWN_FUNCTIONS))
    for call in ctx.calls:
        if (
            project is not None
            and call not in found
            and worker(ctx, call) is not None
            and project.helper_starts_processes(ctx, call)
        ):
            found.append(call)
    return found


def worker(ctx: FileContext, spawn: cst.Call) -> cst.FunctionDef | None:
    """The top-level function of this file that `spawn` runs in each worker, else None."""
    target = argument(spawn, 0, "fn")
    if type(target) is not cst.Name:
        return None
    defs = ctx.functions.get(target.value, [])
    return defs[0] if len(defs) == 1 and ctx.parent(defs[0]) is ctx.module else None


def index_parameter(ctx: FileContext, func: cst.FunctionDef) -> str | None:
    """The name of the first parameter of `func` when this file spawns it: the process
    index `mp.spawn` passes, a rank whatever its name (`gpu`, `proc_id`)."""
    if not func.params.params or not any(worker(ctx, s) is func for s in ctx.memo(spawns)):
        return None
    return func.params.params[0].name.value


def in_main_block(ctx: FileContext, node: cst.CSTNode) -> bool:
    """`node` runs under `if __name__ == "__main__":`: in the starting process only."""
    return any(type(a) is cst.If and "__main__" in ctx.code(a.test) for a in ctx.ancestors(node))


def in_starting_process(ctx: FileContext, node: cst.CSTNode, starts: list[cst.Call]) -> bool:
    """`node` runs in the process that starts the workers, before a start: earlier in the
    function that starts them, or in the `if __name__ == "__main__":` block of a file
    that starts them."""
    if not starts:
        return False
    func = ctx.enclosing_function(node)
    if func is not None:
        return any(
            ctx.enclosing_function(start) is func and ctx.before(node, start) for start in starts
        )
    return in_main_block(ctx, node)

"""Values that hold one value for a whole run, as far as the saves of a loop go: an
expression evaluated outside every loop, where its code runs once per process (module
level, an entry point, a function whose every call in sight runs once), is the same for
each round of a loop that runs later, whatever its names say (`epochs = args.epochs`,
`log_dir = f"log_{int(time.time())}"` in the option parser). Three-valued in effect: True
only when every call of the function is in sight and runs once; a function nothing in the
file calls is an entry point by its name or else unknown (False)."""

from __future__ import annotations

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain.runners import is_entry, outside_calls

_LEVELS = 3  # callers followed up to module level or an entry point


def same_every_round(ctx: FileContext, value_at: cst.CSTNode) -> bool:
    """A value evaluated at `value_at` is the same for every round of any loop that runs
    after it: evaluated outside every loop of its scope, in code that runs once per
    process."""
    if ctx.enclosing_loop(value_at) is not None or _in_comprehension(ctx, value_at):
        return False
    scope = ctx.scope(value_at)
    if scope is ctx.module:
        return True
    return type(scope) is cst.FunctionDef and runs_once_per_process(ctx, scope)


def runs_once_per_process(ctx: FileContext, func: cst.FunctionDef, levels: int = _LEVELS) -> bool:
    """Each run of the program runs `func` once as far as its file shows: every call of it
    in sight is outside any loop, at module level or in a function that runs once in turn;
    or nothing in the file calls it and its name makes it an entry point (`main`)."""
    sites = outside_calls(ctx, func)
    if not sites:
        return is_entry(ctx, func) and not _method(ctx, func)
    if levels == 0:
        return False
    for site in sites:
        if ctx.enclosing_loop(site) is not None or _in_comprehension(ctx, site):
            return False
        caller = ctx.scope(site)
        if caller is ctx.module:
            continue
        if type(caller) is not cst.FunctionDef or not runs_once_per_process(
            ctx, caller, levels - 1
        ):
            return False
    return True


def _method(ctx: FileContext, func: cst.FunctionDef) -> bool:
    """`func` is a method: an object may run it many times (`trainer.train()`)."""
    return ctx.model.enclosing_class(func) is not None


def _in_comprehension(ctx: FileContext, node: cst.CSTNode) -> bool:
    """`node` lies in a comprehension or generator of its function: evaluated per item."""
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)):
            return True
        if isinstance(ancestor, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            return False
    return False

"""Checkpoint loads that restore state: what `torch.load` returns handed to a
`load_state_dict`, and for a function the loads without a `map_location` whose file its
callers choose (`helper_loads`), so that the files calling it can judge where the tensors
land."""

from __future__ import annotations

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain.overwrites import path_texts
from ddplint.domain.written_files import HelperLoad
from ddplint.engine import argument
from ddplint.engine.model import parameter_positions

LOAD = "torch.load"


def feeds_state(ctx: FileContext, load: cst.Call) -> bool:
    """What `load` returns reaches a `.load_state_dict(...)` of its function: passed
    straight in, or through the name it is assigned to."""
    names: set[str] = set()
    for ancestor in ctx.ancestors(load):
        if type(ancestor) is cst.Call and _is_state_load(ancestor):
            return True
        if type(ancestor) is cst.Assign:
            names = {t.target.value for t in ancestor.targets if type(t.target) is cst.Name}
            break
        if isinstance(ancestor, (cst.SimpleStatementLine, cst.FunctionDef)):
            break
    if not names:
        return False
    scope = ctx.scope(load)
    for call in ctx.method_calls("load_state_dict"):
        if (
            ctx.scope(call) is scope
            and ctx.before(load, call)
            and names & {n for arg in call.args for n in ctx.names_in(arg.value)}
        ):
            return True
    return False


def _is_state_load(call: cst.Call) -> bool:
    func = call.func
    return type(func) is cst.Attribute and func.attr.value == "load_state_dict"


def helper_loads(ctx: FileContext, func: cst.FunctionDef) -> tuple[HelperLoad, ...]:
    """The `torch.load` calls of `func` that read a file a parameter names, with no
    `map_location` or one a parameter passes (None by default: `map_location=None`); and
    those of a file whose name `func` gives itself (`HelperLoad.texts`)."""
    positions = parameter_positions(func)
    defaults = {
        p.name.value: p.default
        for p in (*func.params.posonly_params, *func.params.params, *func.params.kwonly_params)
    }
    found = []
    for load in ctx.calls_to(LOAD):
        if ctx.scope(load) is not func or any(a.star == "**" for a in load.args):
            continue
        path = argument(load, 0, "f")
        if path is None:
            continue
        if type(path) is not cst.Name or path.value not in positions:
            texts = tuple(path_texts(ctx, path, load))
            if any("." in t.rsplit("/", 1)[-1] for t in texts):  # a file it names itself
                found.append(HelperLoad(("", -1), None, feeds_state(ctx, load), texts))
            continue
        where = argument(load, 1, "map_location")
        map_param = None
        if type(where) is cst.Name and where.value in positions:
            default = defaults.get(where.value)
            if not (type(default) is cst.Name and default.value == "None"):
                continue  # a device unless the caller says otherwise
            map_param = (where.value, positions[where.value])
        elif where is not None and not (type(where) is cst.Name and where.value == "None"):
            continue
        found.append(
            HelperLoad(
                path_param=(path.value, positions[path.value]),
                map_param=map_param,
                feeds_state=feeds_state(ctx, load),
            )
        )
    return tuple(found)

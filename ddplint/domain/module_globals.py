"""Module globals that hold the world size: `my_size = -1` at module level, then
`global my_size; my_size = dist.get_world_size()` in the module's setup function. Other
modules read them as `ext_dist.my_size` (see `Project.holds_world_size`)."""

from __future__ import annotations

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain import domain_of
from ddplint.domain.ranks import int_literal


def world_size_globals(ctx: FileContext) -> tuple[str, ...]:
    """Names of module globals bound to the world size somewhere (at module level, or in
    a function declaring them `global`) and otherwise only to integer literals (the
    `-1` / `1` placeholders of the non-distributed run)."""
    declared = _declared_global(ctx)
    ranks = domain_of(ctx).ranks
    found = []
    for name, bindings in ctx.bindings.items():
        if "." in name or "[" in name:
            continue
        module_level = [
            b
            for b in bindings
            if b.scope is ctx.module or (b.scope in declared.get(name, ()) and b.kind == "assign")
        ]
        sizes = [b for b in module_level if ranks.is_world_size(b.value, b.statement)]
        if sizes and all(
            b in sizes or (b.kind == "assign" and int_literal(b.value) is not None)
            for b in module_level
        ):
            found.append(name)
    return tuple(sorted(found))


def _declared_global(ctx: FileContext) -> dict[str, set[cst.CSTNode]]:
    """name -> the functions whose `global name` statement makes their bindings the
    module's."""
    declared: dict[str, set[cst.CSTNode]] = {}
    for node in ctx.nodes_of(cst.Global):
        assert type(node) is cst.Global
        func = ctx.enclosing_function(node)
        if func is None:
            continue
        for item in node.names:
            declared.setdefault(item.name.value, set()).add(func)
    return declared

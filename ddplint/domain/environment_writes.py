"""Where a script writes a rendezvous variable into its own environment
(`os.environ["MASTER_PORT"] = "12355"`) with a value written in the code, on every run of
its function: not filling in a missing one (`setdefault`, or under a test of the variable)
and not taken from an option or the environment."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from ddplint.context import FileContext


@dataclass(frozen=True)
class EnvironmentWrite:
    """`assign` sets `key` in `environ` (the process's `os.environ`) to `value`, whose
    possible values are the literals `literals`."""

    assign: cst.Assign
    key: str
    environ: cst.BaseExpression
    value: cst.BaseExpression
    literals: tuple[object, ...]


def constant_writes(ctx: FileContext, key: str) -> list[EnvironmentWrite]:
    """`os.environ[key] = <literal>` statements (a literal, or `str()` of one, directly or
    through names all of whose values are such), not under a test of `key` itself
    (`if "MASTER_PORT" not in os.environ:` fills in a missing one), in source order."""
    found = []
    for node in ctx.nodes_of(cst.Assign):
        assert type(node) is cst.Assign
        target = _environ_target(ctx, node)
        if target is None or _subscript_key(target) != key:
            continue
        literals = _literals(ctx, node.value)
        if literals is None or any(key in ctx.code(c.test) for c in ctx.flow.conditions(node)):
            continue
        found.append(EnvironmentWrite(node, key, target.value, node.value, literals))
    return found


def _environ_target(ctx: FileContext, assign: cst.Assign) -> cst.Subscript | None:
    """The `os.environ[...]` target of `assign` (the process's own environment, not a copy
    made for a child)."""
    if len(assign.targets) != 1:
        return None
    target = assign.targets[0].target
    if type(target) is not cst.Subscript:
        return None
    return target if ctx.model.imports.resolve(target.value) == "os.environ" else None


def _subscript_key(subscript: cst.Subscript) -> str | None:
    if len(subscript.slice) != 1:
        return None
    index = subscript.slice[0].slice
    if type(index) is cst.Index and type(index.value) is cst.SimpleString:
        value = index.value.evaluated_value
        return value if isinstance(value, str) else None
    return None


def _literals(ctx: FileContext, value: cst.BaseExpression) -> tuple[object, ...] | None:
    """The literal values `value` may hold, or None when one of them is not a literal."""
    leaves = [v for v in ctx.resolver.values(value, value) if v.leaf]
    if not leaves:
        return None
    found: list[object] = []
    for leaf in leaves:
        expr = leaf.expr
        if _is_str_call(expr):
            assert type(expr) is cst.Call
            inner = [v for v in ctx.resolver.values(expr.args[0].value, expr) if v.leaf]
            if not inner or not all(type(v.expr) is cst.Integer for v in inner):
                return None
            found.extend(str(int(v.expr.value)) for v in inner if type(v.expr) is cst.Integer)
        elif type(expr) is cst.SimpleString:
            found.append(expr.evaluated_value)
        elif type(expr) is cst.Integer:
            found.append(int(expr.value))
        else:
            return None
    return tuple(found)


def _is_str_call(expr: cst.BaseExpression) -> bool:
    return (
        type(expr) is cst.Call
        and type(expr.func) is cst.Name
        and expr.func.value == "str"
        and len(expr.args) == 1
    )

"""A value computed per call: an expression of a function built from its parameters holds,
at each call of that function in this file, what that call passes for them (its default
where a call passes nothing). `save(out)` called with `f"ckpt-{step}"` in one place and
`"last"` in another writes two different paths, each decided by its own caller."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain.runners import call_sites
from ddplint.engine import Value


@dataclass(frozen=True)
class Call:
    """One call of the function (`site`) and, for each parameter the value is built from,
    what it binds there and where that is evaluated (the argument at the call, or the
    default at the function)."""

    site: cst.Call
    bound: tuple[tuple[cst.BaseExpression, cst.CSTNode], ...]


def per_call(
    ctx: FileContext, expr: cst.BaseExpression, at: cst.CSTNode, depth: int = 3
) -> tuple[cst.FunctionDef, list[Call]] | None:
    """The function around `at` and, for each of its calls in this file (outside itself),
    what that call binds to the parameters `expr` is built from (`depth` levels of names
    deep; a parameter read only through its fields, `opt.save_dir`, does not count). None
    when `expr` is built from no such parameter, or no call of the function is in sight,
    or a call's binding cannot be told (`f(*args)`, a parameter with no default left
    out): then every caller's values are what the value may hold."""
    func = ctx.enclosing_function(at)
    if func is None:
        return None

    def inside(value: Value) -> bool:
        return ctx.is_inside(value.at, func)

    params = _parameters(func)
    used = sorted(
        {
            name.value
            for value in ctx.resolver.sources(expr, at, depth, inside)
            for name in ctx.walk(value.expr)
            if type(name) is cst.Name
            and name.value in params
            and not _attribute_name(ctx, name)
            and any(
                b.kind == "param" and b.owner is func
                for b in ctx.resolver.reaching(name.value, value.at)
            )
        }
    )
    if not used:
        return None
    calls = []
    for site in call_sites(ctx, func):
        if ctx.is_inside(site, func):
            continue
        if any(arg.star for arg in site.args):
            return None
        bound: list[tuple[cst.BaseExpression, cst.CSTNode]] = []
        for name in used:
            passed = ctx.resolver.passed(site, func, name)
            default = params[name].default
            if passed is not None:
                bound.append((passed, site))
            elif default is not None:
                bound.append((default, func))
            else:
                return None
        calls.append(Call(site, tuple(bound)))
    return (func, calls) if calls else None


def _attribute_name(ctx: FileContext, name: cst.Name) -> bool:
    """`x.name` or `f(name=...)`: a name that is no variable; or `name.x`: an object
    the value reads a field of (`opt.save_dir`), which a call's argument (`opt`) does not
    show; a method called on it (`key.encode()`) uses its value."""
    parent = ctx.parent(name)
    if type(parent) is cst.Attribute and parent.value is name:
        call = ctx.parent(parent)
        return not (type(call) is cst.Call and call.func is parent)  # `key.encode()`: used
    return type(parent) is cst.Attribute or (type(parent) is cst.Arg and parent.keyword is name)


def _parameters(func: cst.FunctionDef) -> dict[str, cst.Param]:
    params = func.params
    return {
        p.name.value: p for p in (*params.posonly_params, *params.params, *params.kwonly_params)
    }

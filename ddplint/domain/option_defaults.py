"""The default a command-line option falls back to: `args.world_size`, read where `args`
holds what `parser.parse_args()` returned and the file never assigns `args.world_size`,
is the `default=` of the one `add_argument` of the file whose destination is
`world_size`, when no argument is given."""

from __future__ import annotations

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain.command_line import same_on_every_rank
from ddplint.engine.resolve import argument

_MISSING = cst.Name("None")  # `add_argument` without `default=`: the option defaults to None


def option_default(
    ctx: FileContext, expr: cst.BaseExpression, at: cst.CSTNode
) -> cst.BaseExpression | None:
    """The `default=` expression of the option `expr` reads (`None` when it has none), or
    None when `expr` is not an option the file declares once and never assigns."""
    found = _declaration(ctx, expr, at)
    if found is None:
        return None
    default = argument(found, None, "default")
    return _MISSING if default is None else default


def option_flag(ctx: FileContext, expr: cst.BaseExpression, at: cst.CSTNode) -> str | None:
    """The command-line flag (`--world-size`) of the option `expr` reads, as declared."""
    found = _declaration(ctx, expr, at)
    if found is None:
        return None
    flags = declared_flags(found)
    longs = [flag for flag in flags if flag.startswith("--")]
    return longs[0] if longs else next(iter(flags), None)


def declared_flags(declaration: cst.Call) -> list[str]:
    """The flags an `add_argument(...)` declares (`["-s", "--seed"]`), as written."""
    flags = [_text(arg.value) for arg in declaration.args if arg.keyword is None and not arg.star]
    return [flag for flag in flags if flag is not None]


def option_declaration(
    ctx: FileContext, expr: cst.BaseExpression, at: cst.CSTNode
) -> cst.Call | None:
    """The one `add_argument(...)` of the file declaring the option `expr` reads (None
    when there is none, or several)."""
    return _declaration(ctx, expr, at)


def _declaration(ctx: FileContext, expr: cst.BaseExpression, at: cst.CSTNode) -> cst.Call | None:
    """The one `add_argument(...)` of the file declaring the option `expr` reads."""
    if not isinstance(expr, cst.Attribute) or not same_on_every_rank(ctx, expr, at):
        return None
    if not isinstance(expr.value, cst.Name):
        return None
    found = [call for call in ctx.method_calls("add_argument") if _dest(call) == expr.attr.value]
    return found[0] if len(found) == 1 else None


def _dest(call: cst.Call) -> str | None:
    """Where `parse_args()` stores the option `add_argument(...)` declares: `dest=`, else
    the first long option, else the first short one, `-` read as `_`."""
    dest = argument(call, None, "dest")
    if dest is not None:
        return _text(dest)
    names = [_text(arg.value) for arg in call.args if arg.keyword is None and not arg.star]
    flags = [name for name in names if name is not None]
    longs = [name for name in flags if name.startswith("--")]
    chosen = longs[0] if longs else (flags[0] if flags else None)
    if chosen is None or not chosen.startswith("-"):
        return None
    return chosen.lstrip("-").replace("-", "_")


def _text(expr: cst.BaseExpression) -> str | None:
    if isinstance(expr, cst.SimpleString):
        value = expr.evaluated_value
        return value if isinstance(value, str) else None
    return None

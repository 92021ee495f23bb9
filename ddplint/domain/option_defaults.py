"""The default a command-line option falls back to: `args.world_size`, read where `args`
holds what `parser.parse_args()` returned and the file never assigns `args.world_size`,
is the `default=` of the one `add_argument` of the file whose destination is
`world_size`, when no argument is given."""

from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain.command_line import same_on_every_rank
from ddplint.domain.project_view import project_of
from ddplint.engine.resolve import argument
from ddplint.project_files import project_files, project_root

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
    """The one `add_argument(...)` declaring the option `expr` reads: of the file, or,
    where the file declares no option at all, of the project modules it imports (an
    options module: `args = get_args()` from `args.py`), when exactly one of them declares
    it once. None when there is none, or several."""
    found = _declaration(ctx, expr, at)
    if found is not None or next(ctx.method_calls("add_argument"), None) is not None:
        return found
    if type(expr) is not cst.Attribute or type(expr.value) is not cst.Name:
        return None
    return options_module_declaration(ctx, expr.attr.value)


def options_module_declaration(ctx: FileContext, dest: str) -> cst.Call | None:
    """The one `add_argument(...)` whose destination is `dest` in the project modules the
    file imports, transitively (read with `ast`, the call alone parsed with LibCST), when
    neither the file nor those modules set the option otherwise (`set_defaults`, an
    assignment `args.seed = ...`)."""
    modules = ctx.memo(_options_modules)
    if modules is None:
        return None
    assigned = re.compile(rf"\.\s*{re.escape(dest)}\s*=(?!=)|set_defaults\(")
    if any(assigned.search(text) for text in (ctx.source, *modules.texts)):
        return None
    found = [call for call in modules.declarations if _dest(call) == dest]
    return found[0] if len(found) == 1 else None


@dataclass(frozen=True)
class _OptionsModules:
    """The texts of the project modules a file imports, transitively, and the
    `add_argument(...)` calls they hold."""

    texts: tuple[str, ...]
    declarations: tuple[cst.Call, ...]


def _options_modules(ctx: FileContext) -> _OptionsModules | None:
    """Read once per file (`options_module_declaration` is asked of every finding's
    conditions); None where the file is no part of a project on disk."""
    project = project_of(ctx)
    if project is None or not os.path.isfile(ctx.path):
        return None
    files = project_files(project_root(ctx.path))
    texts = tuple(files.text(path) or "" for path in sorted(project.text_closure(ctx.path)))
    declarations = tuple(
        call for text in texts if "add_argument" in text for call in _declarations_in(text)
    )
    return _OptionsModules(texts, declarations)


def _declarations_in(text: str) -> list[cst.Call]:
    """The `add_argument(...)` calls of a module's text, each parsed by itself."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return []
    calls = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "add_argument"
        ):
            segment = ast.get_source_segment(text, node)
            try:
                parsed = cst.parse_expression(segment or "")
            except cst.ParserSyntaxError:
                continue
            if type(parsed) is cst.Call:
                calls.append(parsed)
    return calls


def _declaration(ctx: FileContext, expr: cst.BaseExpression, at: cst.CSTNode) -> cst.Call | None:
    """The one `add_argument(...)` of the file declaring the option `expr` reads."""
    if type(expr) is not cst.Attribute or not same_on_every_rank(ctx, expr, at):
        return None
    if type(expr.value) is not cst.Name:
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
    if type(expr) is cst.SimpleString:
        value = expr.evaluated_value
        return value if isinstance(value, str) else None
    return None

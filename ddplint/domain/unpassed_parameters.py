"""Branches that need a parameter value no call in sight passes: `if world_size > 1:` in a
loader builder (`world_size=0`) that every call of the project makes without
`world_size`, or `if type == "shakespeare":` (the default) where every call passes
`type="main_run"`. Only a call out of sight (a user's) takes the branch, so whether it
runs is unknown, and so is a finding in it. A call passing a value that is no literal may
take it."""

from __future__ import annotations

import ast
import operator
import os
import re
from collections.abc import Callable
from typing import Any

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain.arguments_in_sight import arguments_in_sight
from ddplint.domain.runners import handed_on
from ddplint.engine.dead_code import COMPARISONS
from ddplint.project_files import project_files, project_root
from ddplint.source import might_be_distributed

_COMPARE: dict[type[cst.BaseCompOp], Callable[[Any, Any], object]] = {
    **COMPARISONS,
    cst.Is: operator.is_,
    cst.IsNot: operator.is_not,
}


def needs_unpassed_argument(ctx: FileContext, node: cst.CSTNode) -> bool:
    """`node` runs only where a parameter of its function holds a value no call in sight
    gives it (a test on the parameter alone, or comparing it with a literal), the function
    has calls in sight (this file, and the project's modules that may run on several
    ranks), and each passes a literal, or nothing for a literal default, that fails the
    test (`if type == "shakespeare":` with `type="shakespeare"` the default and every call
    passing `type="main_run"`)."""
    for condition in ctx.flow.conditions(node):
        for term, value in condition.terms():
            parameter = _parameter_test(ctx, term, value, condition.gate)
            if parameter is not None and _no_call_gives(ctx, *parameter):
                return True
    return False


def _parameter_test(
    ctx: FileContext, term: cst.BaseExpression, value: bool, at: cst.CSTNode
) -> tuple[cst.FunctionDef, str, Callable[[object], bool], object] | None:
    """(function, parameter, whether a value of it takes the branch, its literal default
    or `_NOT_LITERAL`) when `term` must be `value` and reads a parameter alone."""
    name, evaluate = _test_on_name(term)
    if name is None:
        return None
    bindings = ctx.resolver.reaching(name.value, at)
    if len(bindings) != 1 or bindings[0].kind != "param":
        return None
    func, default = bindings[0].scope, bindings[0].value
    if not isinstance(func, cst.FunctionDef):
        return None
    held = _NOT_LITERAL
    if isinstance(default, cst.BaseExpression):
        try:
            held = ast.literal_eval(ctx.code(default))
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            held = _NOT_LITERAL

    def takes(given: object) -> bool:
        return bool(evaluate(given)) == value

    return func, name.value, takes, held


def _test_on_name(
    term: cst.BaseExpression,
) -> tuple[cst.Name | None, Callable[[object], object]]:
    """The parameter a test reads and how the test evaluates a value of it: `p`, or
    `p OP literal` (`world_size > 1`, `mode == "ddp"`, `group is not None`)."""
    if isinstance(term, cst.Name):
        return term, bool
    if (
        isinstance(term, cst.Comparison)
        and len(term.comparisons) == 1
        and isinstance(term.left, cst.Name)
    ):
        target = term.comparisons[0]
        compare = _COMPARE.get(type(target.operator))
        literal = _literal(target.comparator)
        if compare is not None and literal is not _NOT_LITERAL:
            return term.left, lambda held: compare(held, literal)
    return None, bool


_NOT_LITERAL = object()


def _literal(expr: cst.BaseExpression) -> object:
    if isinstance(expr, cst.Name) and expr.value in ("None", "True", "False"):
        return {"None": None, "True": True, "False": False}[expr.value]
    if isinstance(expr, (cst.Integer, cst.Float, cst.SimpleString)):
        return ast.literal_eval(expr.value)
    return _NOT_LITERAL


def _no_call_gives(
    ctx: FileContext,
    func: cst.FunctionDef,
    name: str,
    takes: Callable[[object], bool],
    default: object,
) -> bool:
    """`func` has calls in sight, and each passes for its parameter `name` a literal, or
    nothing where the default is a literal, that `takes` refuses (`arguments_in_sight`).
    Every mention of the function must be such a call: one handed on (`mp.spawn(train,
    args=...)`, a registry), or called in another module where the project does not link
    the call to it (`runner.step(x, strict=False)`), gets its arguments out of sight."""
    names = ctx.resolver.call_names(func)
    if any(handed_on(ctx, callee) for callee in names):
        return False
    passed = arguments_in_sight(ctx, func, name)
    if not passed:
        return False
    for value in passed:
        given = default if value is None else _literal(value)
        try:
            if given is _NOT_LITERAL or takes(given):
                return False
        except (TypeError, ValueError):  # a comparison the value does not support
            return False
    mentioned = sum(_calls_in_other_files(ctx, callee) for callee in names)
    return 0 <= mentioned <= len(passed) - len(ctx.resolver.calls_of(func))


def _calls_in_other_files(ctx: FileContext, name: str) -> int:
    """How many calls of `name` the project's other files that may hold distributed code
    write (`name(`, `obj.name(`; import lines and comments aside), or -1 when one of them
    names it otherwise (hands it on). A call from a file that cannot run on several ranks
    (`might_be_distributed`: the project's index of callers leaves it out too) takes the
    branch in one process, where it does no DDP harm."""
    if not os.path.isfile(ctx.path):
        return 0
    path = os.path.abspath(ctx.path)
    files = project_files(project_root(path))
    word = re.escape(name)
    handed_on = re.compile(rf"(?<![\w.]){word}\b(?!\s*\()")
    called = re.compile(rf"(?<!\w){word}\s*\(")
    count = 0
    for other in files.naming(name) - {path}:
        text = files.text(other) or ""
        if not might_be_distributed(text.encode()):
            continue
        for line in text.splitlines():
            code = line.split("#", 1)[0]
            if _IMPORT_LINE.match(code):
                continue
            if handed_on.search(code):
                return -1
            count += len(called.findall(code))
    return count


_IMPORT_LINE = re.compile(r"\s*(from\s+\S+\s+)?import\s")

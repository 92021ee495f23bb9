"""Out-of-memory handlers: whether an `except` catches an OOM and lets it pass."""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain import domain_of
from ddplint.domain.apis import OOM_CLASSES
from ddplint.domain.ddp_facts import string_value

_BROAD = frozenset({"RuntimeError", "Exception", "BaseException"})
_OOM_TEXT = ("out of memory", "outofmemory")


def handler_types(handler: cst.ExceptHandler) -> list[cst.BaseExpression]:
    """The exception classes an `except` clause names (none for a bare `except:`)."""
    kind = handler.type
    if kind is None:
        return []
    if type(kind) is cst.Tuple:
        return [element.value for element in kind.elements]
    return [kind]


def _catches_oom_type(ctx: FileContext, handler: cst.ExceptHandler) -> bool:
    return any(ctx.qualname(t) in OOM_CLASSES for t in handler_types(handler))


def catches_broad(ctx: FileContext, handler: cst.ExceptHandler) -> bool:
    if handler.type is None:
        return True
    for kind in handler_types(handler):
        if type(kind) is cst.Name and kind.value in _BROAD and ctx.qualname(kind) is None:
            return True
    return False


def _is_oom_test(ctx: FileContext, expr: cst.BaseExpression) -> bool:
    """A test that picks out an OOM: `"out of memory" in str(e)`, `isinstance(e, OOM)`."""
    for node in ctx.walk(expr):
        text = string_value(node) if isinstance(node, cst.BaseExpression) else None
        if text is not None and any(marker in text.lower() for marker in _OOM_TEXT):
            return True
        if isinstance(node, (cst.Name, cst.Attribute)) and ctx.qualname(node) in OOM_CLASSES:
            return True
    return False


def _negated(expr: cst.BaseExpression) -> bool:
    """`"out of memory" not in str(e)` or `not ...`: true for errors that are NOT an OOM."""
    if type(expr) is cst.UnaryOperation and type(expr.operator) is cst.Not:
        return not _negated(expr.expression)
    if type(expr) is cst.Comparison:
        return any(type(c.operator) is cst.NotIn for c in expr.comparisons)
    return False


def _read_through_name(
    ctx: FileContext, test: cst.BaseExpression, at: cst.CSTNode
) -> tuple[cst.BaseExpression, bool]:
    """`test`, or for a test of a name bound to one value (`oom = "out of memory" in msg`,
    then `if not oom:`) that value, with whether a `not` in front flips it."""
    name, flipped = test, False
    while type(name) is cst.UnaryOperation and type(name.operator) is cst.Not:
        name, flipped = name.expression, not flipped
    if type(name) is cst.Name:
        values = [v for v in ctx.resolver.values(name, at) if v.leaf]
        if len(values) == 1 and values[0].expr is not name:
            return values[0].expr, flipped
    return test, False


def _statements(block: cst.BaseSuite) -> list[cst.BaseStatement | cst.BaseSmallStatement]:
    if type(block) is cst.IndentedBlock:
        return list(block.body)
    if type(block) is cst.SimpleStatementSuite:
        return list(block.body)
    return []


def _stops(ctx: FileContext, statements: Sequence[cst.CSTNode]) -> bool:
    """Running `statements` ends in a raise or a process exit (`ddplint.engine.flow`)."""
    return ctx.flow.sequence_leaves(statements, stops_only=True)


def oom_path_swallowed(ctx: FileContext, handler: cst.ExceptHandler) -> bool | None:
    """None if the handler does not handle an OOM; else whether its OOM path goes on
    without re-raising or exiting in a distributed job (a path that carries on only where
    the job is not distributed, after `if dist.is_initialized(): raise`, swallows
    nothing under DDP)."""
    body = _statements(handler.body)
    path: Sequence[cst.CSTNode] = body
    if _catches_oom_type(ctx, handler):
        swallowed: bool | None = not _stops(ctx, body)
    elif not catches_broad(ctx, handler):
        return None
    else:
        swallowed, path = _message_path_swallowed(ctx, body)
    if swallowed and path and domain_of(ctx).gates.single_process(_last(path[-1])):
        return False
    return swallowed


def _last(statement: cst.CSTNode) -> cst.CSTNode:
    """The innermost last statement of `statement` (the end of the path through it)."""
    while True:
        if type(statement) is cst.SimpleStatementLine and statement.body:
            return statement.body[-1]
        if type(statement) is cst.If and statement.orelse is None:
            inner = _statements(statement.body)
            if not inner:
                return statement
            statement = inner[-1]
            continue
        return statement


def _message_path_swallowed(
    ctx: FileContext, body: Sequence[cst.BaseStatement | cst.BaseSmallStatement]
) -> tuple[bool | None, Sequence[cst.CSTNode]]:
    """Whether the OOM path a message test picks out goes on, and that path's statements."""
    for index, statement in enumerate(body):
        if type(statement) is not cst.If:
            continue
        test, flipped = _read_through_name(ctx, statement.test, statement)
        if not _is_oom_test(ctx, test):
            continue
        if _negated(test) is not flipped:
            # `if "out of memory" not in str(e): raise` -> the OOM path is what follows.
            rest: list[cst.CSTNode] = list(body[index + 1 :])
            if statement.orelse is not None:
                orelse = statement.orelse
                rest = ([orelse] if type(orelse) is cst.If else _statements(orelse.body)) + rest
            return not _stops(ctx, rest), rest
        path = _statements(statement.body)
        swallowed = not _stops(ctx, path) and not (
            _stops(ctx, body[index + 1 :]) and _falls_through(ctx, statement.body)
        )
        return swallowed, path
    return None, ()


def _falls_through(ctx: FileContext, block: cst.BaseSuite) -> bool:
    """The block can end without leaving the handler (no return/continue/break/raise)."""
    return not ctx.flow.leaves(block)

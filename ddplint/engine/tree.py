"""Child nodes of a LibCST node in source order, without whitespace and punctuation.

LibCST lists dataclass fields in an order that is not always the order of the source
(`ExceptHandler` puts its body before the exception type, `FunctionDef` its body before
the decorators and return annotation, `MatchCase` the body before the guard): the fields
of those node types are listed here in the order they are written.
"""

from __future__ import annotations

import dataclasses
import operator
import re
from collections.abc import Callable

import libcst as cst

# Fields that only hold whitespace, comments and punctuation: never indexed.
_TRIVIA_FIELD = re.compile(
    r"^(whitespace\w*|lpar|rpar|leading_lines|lines_after_decorators|header|footer|indent"
    r"|trailing_whitespace|newline|semicolon|comma|equal|colon|dot|lbracket|rbracket"
    r"|lbrace|rbrace|asynchronous|star_tok|posonly_ind|first_colon|second_colon"
    r"|trailing_comma)$"
)
# Node types whose dataclass field order is not their source order.
_SOURCE_ORDER: dict[type[cst.CSTNode], tuple[str, ...]] = {
    cst.FunctionDef: ("decorators", "name", "type_parameters", "params", "returns", "body"),
    cst.ClassDef: ("decorators", "name", "type_parameters", "bases", "keywords", "body"),
    cst.ExceptHandler: ("type", "name", "body"),
    cst.ExceptStarHandler: ("type", "name", "body"),
    cst.MatchCase: ("pattern", "guard", "body"),
    cst.IfExp: ("body", "test", "orelse"),
    cst.Arg: ("keyword", "value"),
    cst.Parameters: ("posonly_params", "params", "star_arg", "kwonly_params", "star_kwarg"),
    cst.TypeAlias: ("name", "type_parameters", "value"),
}
_FIELDS: dict[type[cst.CSTNode], tuple[str, ...]] = {}
_GETTERS: dict[type[cst.CSTNode], Callable[[cst.CSTNode], tuple[object, ...]]] = {}
_IS_NODE: dict[type[object], bool] = {}


def child_fields(cls: type[cst.CSTNode]) -> tuple[str, ...]:
    """Names of the fields of `cls` that may hold child nodes, in source order."""
    fields = _FIELDS.get(cls)
    if fields is None:
        names = tuple(f.name for f in dataclasses.fields(cls) if not _TRIVIA_FIELD.match(f.name))
        fields = _FIELDS[cls] = _SOURCE_ORDER.get(cls, names)
    return fields


def _field_getter(cls: type[cst.CSTNode]) -> Callable[[cst.CSTNode], tuple[object, ...]]:
    """One call that reads the child fields of a `cls` node, as a tuple."""
    fields = child_fields(cls)
    if len(fields) >= 2:
        getter: Callable[[cst.CSTNode], tuple[object, ...]] = operator.attrgetter(*fields)
    elif fields:
        single = operator.attrgetter(fields[0])
        getter = lambda node: (single(node),)  # noqa: E731
    else:
        getter = lambda node: ()  # noqa: E731
    _GETTERS[cls] = getter
    return getter


def is_node(value: object) -> bool:
    """`isinstance(value, cst.CSTNode)` without the ABC machinery on the hot path."""
    kind = type(value)
    known = _IS_NODE.get(kind)
    if known is None:
        known = _IS_NODE[kind] = isinstance(value, cst.CSTNode)
    return known


def children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """Child nodes of `node` in source order."""
    getter = _GETTERS.get(type(node)) or _field_getter(type(node))
    found: list[cst.CSTNode] = []
    for value in getter(node):
        kind = type(value)
        if kind is tuple or kind is list:
            found.extend(v for v in value if is_node(v))  # type: ignore[attr-defined]
        elif _IS_NODE.get(kind) or is_node(value):
            found.append(value)  # type: ignore[arg-type]
    return found

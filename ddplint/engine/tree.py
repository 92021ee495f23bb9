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
_GETTERS: dict[type[cst.CSTNode], Callable[[cst.CSTNode], object]] = {}
_SINGLE: set[type[cst.CSTNode]] = set()  # types with one child field
_IS_NODE: dict[type[object], bool] = {}


def child_fields(cls: type[cst.CSTNode]) -> tuple[str, ...]:
    """Names of the fields of `cls` that may hold child nodes, in source order."""
    fields = _FIELDS.get(cls)
    if fields is None:
        names = tuple(f.name for f in dataclasses.fields(cls) if not _TRIVIA_FIELD.match(f.name))
        fields = _FIELDS[cls] = _SOURCE_ORDER.get(cls, names)
    return fields


def _field_getter(cls: type[cst.CSTNode]) -> Callable[[cst.CSTNode], object]:
    """One call that reads the child fields of a `cls` node: a tuple of their values, or the
    value itself where there is one field (`_SINGLE`)."""
    fields = child_fields(cls)
    getter = operator.attrgetter(*fields) if fields else _no_fields
    if len(fields) == 1:
        _SINGLE.add(cls)
    _GETTERS[cls] = getter
    return getter


def _no_fields(node: cst.CSTNode) -> tuple[()]:
    return ()


def is_node(value: object) -> bool:
    """`isinstance(value, cst.CSTNode)` without the ABC machinery on the hot path."""
    kind = type(value)
    known = _IS_NODE.get(kind)
    if known is None:
        known = _IS_NODE[kind] = isinstance(value, cst.CSTNode)
    return known


def children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """Child nodes of `node` in source order."""
    kind = type(node)
    values = (_GETTERS.get(kind) or _field_getter(kind))(node)
    if kind in _SINGLE:
        values = (values,)
    found: list[cst.CSTNode] = []
    for value in values:  # type: ignore[attr-defined]
        kind = type(value)
        if kind is tuple or kind is list:
            for item in value:
                known = _IS_NODE.get(type(item))
                if known or (known is None and is_node(item)):
                    found.append(item)
        else:
            known = _IS_NODE.get(kind)
            if known or (known is None and is_node(value)):
                found.append(value)
    return found

"""Which of the values the resolver lists for an expression decide what it holds.

`Resolver.values` lists each expression once: a name read at several places (`args.nprocs`
in six calls of one helper) is followed the first time, and its other reads come back as
leaves with nothing new below them. Those repeats say nothing about the value; the
expressions they lead to are already in the list.
"""

from __future__ import annotations

import libcst as cst

from ddplint.engine import Resolver
from ddplint.engine.model import storage_key
from ddplint.engine.resolve import Value


def deciding_leaves(resolver: Resolver, expr: cst.BaseExpression, at: cst.CSTNode) -> list[Value]:
    """The leaves of `resolver.values(expr, at)` that are not repeats of a name assigned
    elsewhere in the list (a parameter no caller passes, an unbound name, a call of an
    unknown function, a literal stay)."""
    return [v for v in resolver.values(expr, at) if v.leaf and not _repeat(resolver, v)]


def _repeat(resolver: Resolver, value: Value) -> bool:
    expr = value.expr
    key = storage_key(expr) if isinstance(expr, (cst.Name, cst.Attribute)) else None
    return key is not None and any(b.kind == "assign" for b in resolver.reaching(key, value.at))

"""Constants: whether an expression certainly holds a value of a given kind (the literal
`True`, `torch.bfloat16`) wherever the program gets it from.

"Certainly" means every value the resolver finds for it satisfies the test, and none of it
comes through a parameter (a caller in another module may pass anything) or from a value
the resolver could not follow (a call of an unknown function, an option read at run time).
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from ddplint.engine.model import storage_key
from ddplint.engine.resolve import Resolver


def certainly(
    resolver: Resolver,
    expr: cst.BaseExpression,
    at: cst.CSTNode,
    holds: Callable[[cst.BaseExpression], bool],
) -> bool:
    """Every value `expr` may hold at `at` is one for which `holds` is true."""
    values = resolver.values(expr, at)
    leaves = [v.expr for v in values if v.leaf]
    return (
        bool(leaves)
        and all(holds(leaf) for leaf in leaves)
        and not any(_is_parameter(resolver, v.expr, v.at) for v in values)
    )


def certainly_true(resolver: Resolver, expr: cst.BaseExpression, at: cst.CSTNode) -> bool:
    """`expr` is the constant `True` wherever its value comes from."""
    return certainly(resolver, expr, at, _is_true)


def _is_true(expr: cst.BaseExpression) -> bool:
    return type(expr) is cst.Name and expr.value == "True"


def _is_parameter(resolver: Resolver, expr: cst.BaseExpression, at: cst.CSTNode) -> bool:
    if type(expr) not in (cst.Name, cst.Attribute):
        return False
    key = storage_key(expr)
    return key is not None and any(b.kind == "param" for b in resolver.reaching(key, at))

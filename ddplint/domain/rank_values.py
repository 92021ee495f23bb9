"""One answer to "is this value proven to differ between the ranks of a job": it is computed,
through names the resolver follows and arithmetic, from this process's rank.

A name or attribute is decided by the values the resolver finds for it (`rank = 0` holds no
rank, whatever its name says); only where the resolver can follow it no further (a parameter
no caller of this file passes, an attribute set elsewhere, a call of an unknown function)
does its spelling decide (`Ranks.is_rank_value`: `dist.get_rank()`, `LOCAL_RANK`,
`args.local_rank`). A call of an unknown function that takes the rank as an argument is not
followed: what it returns is not known to depend on it.
"""

from __future__ import annotations

import libcst as cst

from ddplint.domain.ranks import Ranks, strip_conversion


def differs_by_rank(ranks: Ranks, expr: cst.BaseExpression, at: cst.CSTNode) -> bool:
    """`expr`, evaluated at `at`, is computed from this process's rank: `base + rank`,
    `args.seed + dist.get_rank()`, a name assigned one of them, a helper of this file
    returning one."""
    return _differs(ranks, expr, at, set())


def _differs(ranks: Ranks, expr: cst.BaseExpression, at: cst.CSTNode, seen: set[int]) -> bool:
    if id(expr) in seen:
        return False
    seen.add(id(expr))
    for value in ranks.resolver.values(expr, at):
        if not value.leaf:
            continue  # the values it holds decide, not its name
        leaf = strip_conversion(value.expr, ("int", "float", "abs", "round"))
        if leaf is not value.expr and _differs(ranks, leaf, value.at, seen):
            return True
        if isinstance(leaf, cst.BinaryOperation):
            if _differs(ranks, leaf.left, value.at, seen) or _differs(
                ranks, leaf.right, value.at, seen
            ):
                return True
        elif isinstance(leaf, cst.UnaryOperation):
            if _differs(ranks, leaf.expression, value.at, seen):
                return True
        elif (
            not _is_literal(leaf)
            and not _loop_variable(ranks, leaf, value.at)
            and ranks.is_rank_value(leaf, value.at)
        ):
            return True
    return False


def _loop_variable(ranks: Ranks, expr: cst.BaseExpression, at: cst.CSTNode) -> bool:
    """`rank` in `for rank in range(world_size)`: every rank's value in one process."""
    return isinstance(expr, cst.Name) and any(
        b.kind == "for" for b in ranks.resolver.reaching(expr.value, at)
    )


def _is_literal(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, (cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString))

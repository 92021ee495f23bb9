"""One answer to "is this value proven to differ between the ranks of a job": it is computed,
through names the resolver follows and arithmetic, from this process's rank, and into a
function's parameters from the calls of other project modules.

The value is followed one step at a time. A name or attribute is decided by the values the
resolver finds for it (`rank = 0` holds no rank, whatever its name says); only where the
resolver can follow it no further (a parameter no caller of this file passes, an attribute
set elsewhere, a call of an unknown function, also as the only values of a name: `local_rank
= setup_distributed()`) does its spelling decide
(`Ranks.is_rank_value`: `dist.get_rank()`, `LOCAL_RANK`, `args.local_rank`). Not proven: a
loop variable (`for rank in range(world_size)`: every rank's value in one process), an
attribute of another object stored in another function (that store may not run first), a
call of an unknown function that takes the rank as an argument.
"""

from __future__ import annotations

import libcst as cst

from ddplint.domain.ranks import Ranks, strip_conversion
from ddplint.engine.resolve import MAX_DEPTH
from ddplint.names import dotted

_CONVERSIONS = ("int", "float", "abs", "round", "str")
_LITERALS = (cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString)


def differs_by_rank(ranks: Ranks, expr: cst.BaseExpression, at: cst.CSTNode) -> bool:
    """`expr`, evaluated at `at`, is computed from this process's rank: `base + rank`,
    `args.seed + dist.get_rank()`, a name assigned one of them, a helper of this file
    returning one."""
    return _differs(ranks, expr, at, set(), MAX_DEPTH)


def _differs(
    ranks: Ranks, expr: cst.BaseExpression, at: cst.CSTNode, seen: set[int], budget: int
) -> bool:
    if budget < 0 or id(expr) in seen:
        return False
    seen.add(id(expr))
    expr = strip_conversion(expr, _CONVERSIONS)
    if type(expr) is cst.BinaryOperation:
        return _differs(ranks, expr.left, at, seen, budget) or _differs(
            ranks, expr.right, at, seen, budget
        )
    if type(expr) is cst.UnaryOperation:
        return _differs(ranks, expr.expression, at, seen, budget)
    if isinstance(expr, _LITERALS) or _unknown_store(ranks, expr, at):
        return False
    if type(expr) is cst.Name and ranks.is_spawn_index(expr, at):
        return True  # `mp.spawn` passes each worker its own index, whatever else calls it
    held = [v for v in ranks.resolver.values(expr, at, 1) if v.expr is not expr]
    # followed no further, or only to calls out of sight (`local_rank = setup_distributed()`
    # of another module): the spelling decides
    out_of_sight = not held or all(v.leaf and type(v.expr) is cst.Call for v in held)
    if out_of_sight and ranks.is_rank_value(expr, at):
        return True
    if any(_differs(ranks, v.expr, v.at, seen, budget - 1) for v in held):
        return True
    return _passed_elsewhere(ranks, expr, at)


def _passed_elsewhere(ranks: Ranks, expr: cst.BaseExpression, at: cst.CSTNode) -> bool:
    """`expr` is a parameter (`local_rank=0`) that a caller in another module of the
    project passes a rank for."""
    if type(expr) is not cst.Name:
        return False
    return any(
        binding.kind == "param"
        and type(binding.owner) is cst.FunctionDef
        and ranks.rank_passed_elsewhere(binding.owner, binding.target)
        for binding in ranks.resolver.reaching(expr.value, at)
    )


def _unknown_store(ranks: Ranks, expr: cst.BaseExpression, at: cst.CSTNode) -> bool:
    """`expr` is a loop variable, or an attribute of an object other than `self` stored in
    another function than the one reading it."""
    model = ranks.resolver.model
    if type(expr) is cst.Name:
        return any(b.kind == "for" for b in ranks.resolver.reaching(expr.value, at))
    key = dotted(expr) if type(expr) is cst.Attribute else None
    if key is None or key.split(".")[0] in ("self", "cls"):
        return False
    here = model.frame(at)
    return any(
        b.scope is not here and b.scope is not model.module
        for b in ranks.resolver.reaching(key, at)
    )

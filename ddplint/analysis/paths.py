"""File paths, as several rules ask about them: thin views of the engine's value resolver
(`Resolver.values`, `Resolver.sources`) and the domain's rank values
(`Ranks.depends_on_rank`)."""

from __future__ import annotations

import libcst as cst

from ddplint.context import FileContext


def path_values(
    ctx: FileContext, expr: cst.BaseExpression, at: cst.CSTNode
) -> list[tuple[cst.BaseExpression, cst.CSTNode]]:
    """Expressions a path may stand for: itself, what its names are bound to (`with
    open(p) as f` included), and for a parameter what this file's callers pass (or its
    default)."""
    return [(v.expr, v.at) for v in ctx.resolver.values(expr, at)]


def mentions_rank(ctx: FileContext, expr: cst.BaseExpression) -> bool:
    """The expression is computed from the rank somewhere (`f"rank{rank}.pth"`), also
    through the names and helpers it is built from."""
    return ctx.domain.ranks.depends_on_rank(expr)


def per_rank_path(ctx: FileContext, path: cst.BaseExpression, at: cst.CSTNode) -> bool:
    """The file name holds the rank (`f"shard_{rank}.pt"`): an intentional per-rank file."""
    return ctx.domain.ranks.depends_on_rank(path, at)

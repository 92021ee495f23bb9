"""The values a file path may stand for, followed through assignments and callers."""

from __future__ import annotations

import libcst as cst

from ddplint.context import FileContext
from ddplint.names import dotted


def path_values(
    ctx: FileContext, expr: cst.BaseExpression, at: cst.CSTNode, depth: int = 3
) -> list[tuple[cst.BaseExpression, cst.CSTNode]]:
    """Expressions a path may stand for: itself, the values it was assigned, and for a
    parameter what the callers of its function in this file pass (or its default)."""
    found: list[tuple[cst.BaseExpression, cst.CSTNode]] = [(expr, at)]
    name = dotted(expr)
    if name is None or depth == 0:
        return found
    binding = ctx.facts.reaching_binding(name, at)
    if binding is None:
        return found
    if binding.kind == "param":
        passed = ctx.facts.arguments_for(binding)
        for value in passed:
            found.extend(path_values(ctx, value, value, depth - 1))
        if binding.value is not None and not isinstance(binding.value, cst.Name):
            found.append((binding.value, binding.statement))
        return found
    for other in ctx.bindings_of(name, at):
        if other.kind in ("assign", "with"):
            found.extend(path_values(ctx, other.value, other.statement, depth - 1))
    return found


def mentions_rank(ctx: FileContext, expr: cst.BaseExpression, depth: int = 2) -> bool:
    """The expression holds the rank somewhere (`f"rank{rank}.pth"`), also through the
    names it is built from (`osp.join(folder, ckpt_name)`, `ckpt_name = f"rank{r}.pth"`)."""
    for node in ctx.walk(expr):
        if isinstance(node, (cst.Name, cst.Attribute, cst.Call)) and ctx.facts.is_rank_value(node):
            return True
        if (
            depth > 0
            and isinstance(node, cst.Name)
            and not isinstance(ctx.parent(node), cst.Attribute)
            and any(
                mentions_rank(ctx, value, depth - 1) for value in ctx.values_of(node.value, node)
            )
        ):
            return True
    return False


def per_rank_path(ctx: FileContext, path: cst.BaseExpression, at: cst.CSTNode) -> bool:
    """The file name holds the rank (`f"shard_{rank}.pt"`): an intentional per-rank file."""
    values = [v for v, _ in path_values(ctx, path, at)]
    return any(mentions_rank(ctx, v) for v in values)

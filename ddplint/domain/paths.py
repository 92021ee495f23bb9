"""File paths, as several rules ask about them: thin views of the engine's value resolver
(`Resolver.values`, `Resolver.sources`), the domain's rank values
(`Ranks.depends_on_rank`) and its sharded loaders (`samplers.distributed_samplers`)."""

from __future__ import annotations

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain import domain_of
from ddplint.domain.iterable_wrappers import wrapped_iterable
from ddplint.domain.overwrites import item_loops
from ddplint.domain.samplers import distributed_samplers


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
    return domain_of(ctx).ranks.depends_on_rank(expr)


def per_rank_path(ctx: FileContext, path: cst.BaseExpression, at: cst.CSTNode) -> bool:
    """The file name holds the rank (`f"shard_{rank}.pt"`): an intentional per-rank file."""
    return domain_of(ctx).ranks.depends_on_rank(path, at)


# Files `tempfile` creates under a fresh, unique name on every call.
_FRESH_FILES = frozenset(
    {
        "tempfile.NamedTemporaryFile",
        "tempfile.TemporaryFile",
        "tempfile.SpooledTemporaryFile",
    }
)


def fresh_temporary_file(ctx: FileContext, path: cst.BaseExpression, at: cst.CSTNode) -> bool:
    """The file is one `tempfile` just created for this process under a unique name (`with
    tempfile.NamedTemporaryFile() as tmp: torch.save(obj, tmp.file)`, `tmp.name`): no other
    process writes to it."""
    holder = path.value if type(path) is cst.Attribute else path
    return any(
        type(value.expr) is cst.Call and ctx.call_name(value.expr) in _FRESH_FILES
        for value in ctx.resolver.values(holder, at)
    )


def shard_item_path(ctx: FileContext, path: cst.BaseExpression, at: cst.CSTNode) -> bool:
    """The file name comes from the items of a loader that a DistributedSampler shards
    (`for images, paths in loader:` writing `join(out, name_of(paths[k]))`): each rank
    writes the files of its own share of the dataset."""
    loops = item_loops(ctx, path, at)
    if not loops:
        return False
    sharded = {id(use.call) for s in distributed_samplers(ctx) for use in s.loaders}
    if not sharded:
        return False
    return any(_iterates(ctx, loop.iter, loop, sharded) for loop in loops)


def _iterates(
    ctx: FileContext, expr: cst.BaseExpression, at: cst.CSTNode, loaders: set[int], depth: int = 3
) -> bool:
    """`expr` (through `enumerate(...)`, `tqdm(...)`, names and what callers pass for a
    parameter) is one of the DataLoader calls `loaders`."""
    inner = wrapped_iterable(ctx, expr)
    if inner is not None:
        return depth > 0 and _iterates(ctx, inner, at, loaders, depth - 1)
    if id(expr) in loaders:
        return True
    if depth == 0:
        return False
    return any(
        value.expr is not expr and _iterates(ctx, value.expr, value.at, loaders, depth - 1)
        for value in ctx.resolver.values(expr, at)
    )


def own_file(ctx: FileContext, path: cst.BaseExpression, at: cst.CSTNode) -> bool:
    """Each process writes a file of its own there: a name built from the rank or from the
    items of its shard of the data, or a fresh temporary file."""
    return (
        per_rank_path(ctx, path, at)
        or fresh_temporary_file(ctx, path, at)
        or shard_item_path(ctx, path, at)
    )

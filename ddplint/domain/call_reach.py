"""The functions of a file that a piece of its code runs, through calls of the file's own
functions (the one walk of a file's call graph that the rules and the domain share)."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from ddplint.context import FileContext


def functions_reached(
    ctx: FileContext, root: cst.CSTNode, depth: int | None = None
) -> Iterator[cst.FunctionDef]:
    """The functions of this file that the calls within `root` run, directly or through one
    another, at most `depth` calls deep (no limit when None): breadth-first, each once, never
    `root` itself. Lazy, so that a search can stop at the first function it wants."""
    seen: set[cst.CSTNode] = {root}
    frontier: list[cst.CSTNode] = [root]
    level = 0
    while frontier and (depth is None or level < depth):
        level += 1
        inner: list[cst.CSTNode] = []
        for node in frontier:
            for call in ctx.calls_within(node):
                for callee in ctx.resolver.callees(call):
                    if callee not in seen:
                        seen.add(callee)
                        inner.append(callee)
                        yield callee
        frontier = inner

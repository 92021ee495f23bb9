"""Collectives as the sync rules see them: a thin view of `ddplint.domain.collectives`
(the one definition), kept for the callers of these names."""

from __future__ import annotations

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain.apis import SYNC_COLLECTIVES

__all__ = ["SYNC_COLLECTIVES", "collective_functions", "reaches_collective"]


def collective_functions(ctx: FileContext) -> dict[str, cst.Call]:
    """Functions of this file (by name) that issue a collective; value: the call through
    which they do."""
    return ctx.domain.collectives.by_name()


def reaches_collective(ctx: FileContext, call: cst.Call) -> bool:
    """A collective call, or a call of a helper (this file or the project) issuing one."""
    return ctx.domain.collectives.issues(call)

"""The loaders of a training script that shard their data with a DistributedSampler."""

from __future__ import annotations

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain.apis import LOADER_CLASSES, SAMPLER_CLASSES
from ddplint.engine.resolve import argument


def sharded_loaders(ctx: FileContext) -> list[cst.Call]:
    """DataLoaders given a DistributedSampler built in this file (`sampler=` naming one)."""
    found = []
    for loader in ctx.calls_to(*LOADER_CLASSES):
        sampler = argument(loader, 2, "sampler")
        if sampler is None:
            continue
        values = ctx.resolver.values(sampler, loader)
        if any(
            isinstance(v.expr, cst.Call) and ctx.call_name(v.expr) in SAMPLER_CLASSES
            for v in values
        ):
            found.append(loader)
    return found

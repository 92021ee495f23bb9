"""The loaders of a training script that shard their data with a DistributedSampler."""

from __future__ import annotations

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain.apis import LOADER_CLASSES
from ddplint.domain.loops import named_for
from ddplint.domain.project_view import project_of
from ddplint.domain.samplers import LOADER_SAMPLER, is_sampler_call
from ddplint.engine.resolve import argument

_DATASET = 0  # DataLoader(dataset, ...)


def sharded_loaders(ctx: FileContext) -> list[cst.Call]:
    """DataLoaders given a DistributedSampler built in this file (`sampler=` naming one)."""
    found = []
    for loader in ctx.calls_to(*LOADER_CLASSES):
        sampler = argument(loader, LOADER_SAMPLER, "sampler")
        if sampler is None:
            continue
        values = ctx.resolver.values(sampler, loader)
        if any(is_sampler_call(ctx, v.expr) for v in values):
            found.append(loader)
    return found


def dataset_module_draws(ctx: FileContext, loaders: list[cst.Call]) -> bool:
    """The dataset of one of `loaders` is an object of a class of another project module
    that draws at random for its samples (a draw in its `__getitem__`, or a random
    transform it builds: `ModuleSummary.drawing_classes`) and seeds no loader's workers
    itself. A class named for evaluation (`Vimeo90K_Test_Dataset`) is taken not to draw."""
    project = project_of(ctx)
    if project is None:
        return False
    for loader in loaders:
        dataset = argument(loader, _DATASET, "dataset")
        if dataset is None:
            continue
        for value in ctx.resolver.values(dataset, loader):
            if not isinstance(value.expr, cst.Call):
                continue
            found = project.resolve(ctx, value.expr)
            if found is None:
                continue
            module, name = found
            if name not in module.classes or named_for([name]) == "evaluation":
                continue
            if name in module.drawing_classes and not module.reseeds_workers:
                return True
    return False

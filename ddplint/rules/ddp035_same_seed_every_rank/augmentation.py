"""The loaders of a training script that shard their data with a DistributedSampler."""

from __future__ import annotations

import re

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain.apis import LOADER_CLASSES
from ddplint.domain.loops import named_for
from ddplint.domain.project_view import ResolvedModule, project_of
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


def drawing_modules(ctx: FileContext, loaders: list[cst.Call]) -> list[ResolvedModule]:
    """The modules of the project classes the file builds that draw at random for the
    samples (`ModuleSummary.drawing_classes`: a transform whose `__call__` draws, made for
    a data pipeline, or the dataset of one of `loaders` whose `__getitem__` draws or that
    builds a random transform), where the module seeds no loader's workers itself. A class
    named for evaluation (`Vimeo90K_Test_Dataset`) is taken not to draw."""
    project = project_of(ctx)
    if project is None:
        return []
    # `Compose([RandomVerticalFlip()])` of a project transform that draws
    built = [c for c in ctx.calls if _in_pipeline(ctx, c)]
    for loader in loaders:
        dataset = argument(loader, _DATASET, "dataset")
        if dataset is not None:
            built.extend(
                v.expr for v in ctx.resolver.values(dataset, loader) if type(v.expr) is cst.Call
            )
    found = []
    for call in built:
        resolved = project.resolve(ctx, call)
        if resolved is None:
            continue
        module, name = resolved
        if (
            name in module.drawing_classes
            and named_for([name]) != "evaluation"
            and not module.reseeds_workers
        ):
            found.append(module)
    return found


# Where a transform object is made for a data pipeline: a composition, a keyword or a
# name for transforms.
_PIPELINE_WORD = re.compile(r"(?i)transform|augment|compose")


def _in_pipeline(ctx: FileContext, call: cst.Call) -> bool:
    """`call` is made inside a composition (`Compose([...])`), as an argument named for
    transforms (`transform=RandomFlip()`), or assigned to such a name (`train_aug = ...`)."""
    for ancestor in ctx.ancestors(call):
        if type(ancestor) is cst.Call and ancestor is not call:
            return _PIPELINE_WORD.search(ctx.code(ancestor.func)) is not None
        if type(ancestor) is cst.Arg and ancestor.keyword is not None:
            return _PIPELINE_WORD.search(ancestor.keyword.value) is not None
        if type(ancestor) is cst.Assign:
            return any(_PIPELINE_WORD.search(ctx.code(t.target)) for t in ancestor.targets)
        if type(ancestor) is cst.SimpleStatementLine:
            return False
    return False

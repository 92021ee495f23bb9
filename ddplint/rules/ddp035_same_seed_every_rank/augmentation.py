"""What a training script's data pipeline draws at random, as far as its file shows:
torchvision / albumentations random transforms, or a dataset's `__getitem__` that calls
`random`, `numpy.random` or `torch.rand*` itself; and whether its loaders re-seed their
workers themselves (`worker_init_fn=`, `generator=`)."""

from __future__ import annotations

import re

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain.apis import LOADER_CLASSES, SAMPLER_CLASSES
from ddplint.engine.resolve import argument

_TRANSFORM_MODULES = ("torchvision.transforms.", "albumentations.")
_RANDOM_TRANSFORM = re.compile(
    r"Random\w*|RandAugment|AutoAugment|TrivialAugmentWide|AugMix|ColorJitter|"
    r"HorizontalFlip|VerticalFlip|ShiftScaleRotate|ElasticTransform|GaussNoise"
)
_RANDOM_CALLS = ("random.", "numpy.random.", "torch.rand", "torch.randint", "torch.randn")
_SAMPLE_METHOD = "__getitem__"


def random_augmentation(ctx: FileContext) -> cst.CSTNode | None:
    """A random transform built in this file, or a random draw in a dataset's
    `__getitem__`; None when the file shows neither."""
    for call in ctx.calls:
        name = ctx.call_name(call) or ""
        if name.startswith(_TRANSFORM_MODULES) and _RANDOM_TRANSFORM.fullmatch(
            name.rsplit(".", 1)[-1]
        ):
            return call
    for func in ctx.functions.get(_SAMPLE_METHOD, []):
        for call in ctx.calls_within(func):
            if (ctx.call_name(call) or "").startswith(_RANDOM_CALLS):
                return call
    return None


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


def reseeds_workers(ctx: FileContext) -> bool:
    """A loader of the file seeds its workers itself (`worker_init_fn=`, `generator=`)."""
    return any(
        argument(loader, None, "worker_init_fn") is not None
        or argument(loader, None, "generator") is not None
        for loader in ctx.calls_to(*LOADER_CLASSES)
    )

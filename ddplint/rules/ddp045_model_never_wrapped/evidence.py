"""What the text of a training script and of the project modules it imports says about
gradient synchronisation: whether anything there may wrap a model for data parallelism
(DDP, FSDP, DeepSpeed, Horovod, Accelerate, Lightning, ...) or synchronise a model's
gradients or parameters by hand (`dist.all_reduce(p.grad)`). A mention counts: these
tests err towards "may", so that a finding rests on their absence."""

from __future__ import annotations

import os
import re

from ddplint.context import FileContext
from ddplint.domain.project_view import project_of
from ddplint.project.queries import Project
from ddplint.project_files import project_files, project_root

# Anything that may wrap a model or its optimizer for multi-process data parallelism, or
# split a model over processes (tensor or pipeline parallelism, RPC), where no DDP wrapper
# is expected.
_WRAPS = re.compile(
    r"DistributedDataParallel|FullyShardedDataParallel|fully_shard|\bDDP\b|\bFSDP\b"
    r"|deepspeed|\baccelerate\b|Accelerator\b|horovod|\bhvd\b|DistributedOptimizer"
    r"|lightning|colossalai|fairscale|ZeroRedundancyOptimizer|register_comm_hook"
    r"|distributed\.pipelining|distributed\.rpc|\bPipe\(|DataParallel|\.prepare\("
    # tensor, pipeline and composable parallelism: a model split or replicated otherwise
    r"|parallelize_module|distributed\.tensor|device_mesh|DeviceMesh|DTensor"
    r"|distribute_tensor|distributed\._composable"
)
# A collective given something of the model: gradients, parameters, weights, a state dict;
# also a point-to-point exchange of them (a hand-written ring: `dist.send(p.grad, dst)`).
_SYNCS = re.compile(
    r"(all_reduce|allreduce|reduce_scatter|broadcast|all_gather|\breduce|\bi?send|\bi?recv"
    r"|\bgather|\bscatter)\w*\("  # a gather to rank 0 and a scatter back: by hand too
    r"(?:[^()\n]|\([^()\n]*\))*"
    # the gradients, parameters or weights, or the model itself (not a value it holds:
    # `dist.all_gather(losses, model.loss_G)` gathers a metric)
    r"(grad|param|weight|\.data\b|state_dict|\bmodel(?:\.module)?\s*[,)\]])",
    re.IGNORECASE,
)


def wrap_mentions(ctx: FileContext) -> tuple[bool, bool]:
    """Whether the file's text, and whether the text of a project module it may import
    (transitively), mentions a data-parallel wrapper or a collective on the model."""
    files = project_files(project_root(ctx.path)) if os.path.isfile(ctx.path) else None
    here = _mentions(ctx.source)
    if files is None:
        return here, False
    path = os.path.abspath(ctx.path)
    project = project_of(ctx) or Project({})  # text closures only: nothing more is parsed
    elsewhere = any(_mentions(files.text(p) or "") for p in project.text_closure(path))
    return here, elsewhere


# What each alternative of `_SYNCS`'s collective holds (`allreduce` holds `reduce`,
# `all_gather` holds `gather`).
_SYNC_WORDS = ("reduce", "broadcast", "gather", "scatter", "send", "recv")
_BACKWARD = re.compile(r"\bbackward\(")


def imported_texts(ctx: FileContext) -> list[str]:
    """The texts of the project modules the file may import, transitively (read without
    a parse: `ProjectView.text_closure`)."""
    if not os.path.isfile(ctx.path):
        return []
    files = project_files(project_root(ctx.path))
    project = project_of(ctx) or Project({})  # text closures only: nothing more is parsed
    path = os.path.abspath(ctx.path)
    return [files.text(p) or "" for p in sorted(project.text_closure(path))]


def backward_elsewhere(texts: list[str]) -> bool:
    """One of `texts` calls `backward()`: where a script hands its model to a project
    function, the training step may be there."""
    return any(_BACKWARD.search(t) for t in texts)


def wrapper_elsewhere(texts: list[str]) -> bool:
    """One of `texts` mentions a data-parallel wrapper (not only a collective)."""
    return any(_WRAPS.search(t) for t in texts)


def _mentions(text: str) -> bool:
    return bool(_WRAPS.search(text) or (_may_sync(text) and _SYNCS.search(text)))


def syncs_by_hand(ctx: FileContext) -> bool:
    """The file's text may hand the model's gradients or parameters to a collective
    (`dist.all_reduce(p.grad)`)."""
    return _may_sync(ctx.source) and bool(_SYNCS.search(ctx.source))


def _may_sync(text: str) -> bool:
    """`text` holds a word every match of `_SYNCS` holds (a case-insensitive pattern
    led by an alternation reads a long text slowly)."""
    folded = text.casefold()  # what `re.IGNORECASE` equates (the long s folds to `s`)
    return any(word in folded for word in _SYNC_WORDS)

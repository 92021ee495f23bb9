"""Which dataset samples each batch held: DataLoaders, their samplers, their iterations.

A loader's iterator asks its sampler for the indices of a batch (``_next_index``) before it
fetches it, possibly ahead of time (worker prefetch); the indices wait in a queue on the iterator
and are assigned to the batch that ``__next__`` hands to the script, in order.
"""

from __future__ import annotations

import os
import sys
from collections import deque
from types import FrameType
from typing import Any

import torch
from torch.utils.data import (
    DataLoader,
    DistributedSampler,
    IterableDataset,
    RandomSampler,
    SequentialSampler,
)

from ..hooks.failopen import fail_open
from .recorder import Recorder

_SKIP_DIRS = (
    os.path.dirname(torch.__file__) + os.sep,
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep,
)
_ID = "_guards_compare_id"
_TAG = "_guards_compare_iteration"
_QUEUE = "_guards_compare_indices"
_BACKWARDS = "_guards_compare_backwards"


def user_site() -> str:
    """``file.py:LINE`` of the innermost caller outside torch and guards."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_SKIP_DIRS):
        frame = frame.f_back
    if frame is None:
        return "?"
    return f"{os.path.basename(frame.f_code.co_filename)}:{frame.f_lineno}"


def _shuffles(sampler: object) -> bool | None:
    if isinstance(sampler, DistributedSampler):
        return bool(sampler.shuffle)
    if isinstance(sampler, RandomSampler):
        return True
    if isinstance(sampler, SequentialSampler):
        return False
    return None


def _first_dim(data: Any) -> int | None:
    """The leading size of the first tensor in a collated batch."""
    if isinstance(data, torch.Tensor):
        return int(data.shape[0]) if data.dim() else None
    if isinstance(data, dict):
        data = list(data.values())
    if isinstance(data, (list, tuple)):
        for item in data:
            size = _first_dim(item)
            if size is not None:
                return size
    return None


class LoaderTracker:
    """Assigns ids to loaders and reports their batches and iterations to the recorder."""

    def __init__(self, recorder: Recorder) -> None:
        self.recorder = recorder
        self.count = 0

    def _id(self, loader: DataLoader[Any], site: str) -> int:
        known = loader.__dict__.get(_ID)
        if isinstance(known, int):
            return known
        number = self.count
        self.count += 1
        object.__setattr__(loader, _ID, number)
        sampler = loader.batch_sampler if loader.batch_sampler is not None else loader.sampler
        inner = getattr(sampler, "sampler", loader.sampler)
        batch_size = loader.batch_size
        if batch_size is None:
            batch_size = getattr(loader.batch_sampler, "batch_size", None)
        drop_last = (
            getattr(inner, "drop_last", None) if isinstance(inner, DistributedSampler) else None
        )
        self.recorder.write(
            {
                "kind": "loader",
                "id": number,
                "site": site,
                "batch_size": batch_size if isinstance(batch_size, int) else None,
                "sampler": type(inner).__name__,
                "shuffle": _shuffles(inner),
                "iterable": isinstance(loader.dataset, IterableDataset),
                "drop_last": drop_last,
            }
        )
        return number

    @fail_open
    def built(self, loader: DataLoader[Any]) -> None:
        self._id(loader, user_site())

    @fail_open
    def before_iter(self, loader: DataLoader[Any]) -> None:
        kept = loader.__dict__.get("_iterator")  # persistent workers: one iterator, reset
        if kept is not None and isinstance(kept.__dict__.get(_QUEUE), deque):
            kept.__dict__[_QUEUE].clear()

    @fail_open
    def iterating(self, loader: DataLoader[Any], iterator: object) -> None:
        number = self._id(loader, "?")
        iteration = int(loader.__dict__.get(_TAG, -1)) + 1
        object.__setattr__(loader, _TAG, iteration)
        iterator.__dict__[_TAG] = (number, iteration)
        iterator.__dict__[_BACKWARDS] = self.recorder.backwards
        self.recorder.retract(number, iteration)
        epoch = getattr(loader.sampler, "epoch", None)
        self.recorder.write(
            {
                "kind": "epoch",
                "loader": number,
                "iteration": iteration,
                "sampler_epoch": epoch if isinstance(epoch, int) else None,
                "step": self.recorder.step,
            }
        )

    @fail_open
    def index_taken(self, iterator: object, index: Any) -> None:
        """The sampler gave the indices of a batch (kept as given: a BatchSampler yields a new
        list each time; numpy integers become ints when written)."""
        queue = iterator.__dict__.get(_QUEUE)
        if queue is None:
            queue = iterator.__dict__[_QUEUE] = deque()
        if index is None or isinstance(index, list):
            queue.append(index)
        elif isinstance(index, int):
            queue.append([index])
        else:
            queue.append(list(index))

    @fail_open
    def batch_out(self, iterator: object, data: Any) -> None:
        queue = iterator.__dict__.get(_QUEUE)
        indices = queue.popleft() if queue else None
        tag = iterator.__dict__.get(_TAG, (-1, -1))
        if getattr(iterator, "_dataset_kind", 0) == 1:  # an IterableDataset: no indices
            indices = None
        self.recorder.on_batch(tag, indices, None if indices is not None else _first_dim(data))

    @fail_open
    def ended(self, iterator: object) -> None:
        """The iteration is exhausted: if no backward() ran since it began, it evaluated."""
        tag = iterator.__dict__.get(_TAG)
        if tag is not None and iterator.__dict__.get(_BACKWARDS) == self.recorder.backwards:
            self.recorder.retract(tag[0], tag[1] + 1)

"""The only recording code on the user's threads: thin wrappers that call the recorder.

Patched while recording: ``DataLoader.__init__``/``__iter__`` and its iterator's
``_next_index``/``__next__`` (sample indices), ``Tensor.backward`` (the loss), a global optimizer
step post-hook (gradient norm, learning rates, parameters; the step limit) and
``GradScaler.scale``/``step`` (loss scale, skipped steps), ``DistributedDataParallel.__init__``
(the models, to find BatchNorm layers), ``Module.__call__`` (the outermost call of a module with
parameters, with gradients on: digests of the data rows entering the model). Each wrapper calls
the original unconditionally; the recorder's side is fail-open.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import torch
from torch.nn.parallel import DistributedDataParallel
from torch.optim.optimizer import register_optimizer_step_post_hook
from torch.utils.data import DataLoader
from torch.utils.data import dataloader as dataloader_module

from .recorder import Recorder
from .sampling import LoaderTracker


class StepLimitReached(SystemExit):
    """Raised from the optimizer step hook after the last recorded step: a clean exit (0) at
    the same step on every rank, after the step's collectives have completed."""

    def __init__(self) -> None:
        super().__init__(0)


class Patches:
    """The attributes replaced and hook handles registered by one ``install``, for ``remove``."""

    def __init__(self) -> None:
        self._replaced: list[tuple[object, str, object]] = []
        self._handles: list[Any] = []

    def replace(self, owner: object, name: str, wrapper: Callable[..., Any]) -> None:
        original = owner.__dict__[name] if isinstance(owner, type) else getattr(owner, name)
        self._replaced.append((owner, name, original))
        setattr(owner, name, functools.wraps(original)(wrapper))

    def handle(self, handle: Any) -> None:
        self._handles.append(handle)

    def remove(self) -> None:
        """Put every original back (benchmarks and tests; a recorded run never needs it)."""
        for owner, name, original in reversed(self._replaced):
            setattr(owner, name, original)
        for handle in self._handles:
            handle.remove()
        self._replaced.clear()
        self._handles.clear()


def _patch_loaders(patches: Patches, tracker: LoaderTracker) -> None:
    loader_init: Callable[..., Any] = DataLoader.__init__
    loader_iter: Callable[..., Any] = DataLoader.__iter__
    base = dataloader_module._BaseDataLoaderIter
    next_index: Callable[..., Any] = base._next_index
    next_batch: Callable[..., Any] = base.__next__

    def init(self: DataLoader[Any], *args: Any, **kwargs: Any) -> None:
        loader_init(self, *args, **kwargs)
        tracker.built(self)

    def iterate(self: DataLoader[Any]) -> Any:
        tracker.before_iter(self)
        iterator = loader_iter(self)
        tracker.iterating(self, iterator)
        return iterator

    def take_index(self: Any) -> Any:
        index = next_index(self)
        tracker.index_taken(self, index)
        return index

    def next_out(self: Any) -> Any:
        try:
            data = next_batch(self)
        except StopIteration:
            tracker.ended(self)
            raise
        tracker.batch_out(self, data)
        return data

    patches.replace(DataLoader, "__init__", init)
    patches.replace(DataLoader, "__iter__", iterate)
    patches.replace(base, "_next_index", take_index)
    patches.replace(base, "__next__", next_out)


def _patch_backward(patches: Patches, recorder: Recorder) -> None:
    original: Callable[..., Any] = torch.Tensor.backward
    depth = [0]  # a backward() inside backward (reentrant checkpointing) is not a new loss

    def backward(self: torch.Tensor, gradient: Any = None, *args: Any, **kwargs: Any) -> Any:
        if depth[0] == 0:
            recorder.on_backward(self, gradient is not None)
        depth[0] += 1
        try:
            return original(self, gradient, *args, **kwargs)
        finally:
            depth[0] -= 1

    patches.replace(torch.Tensor, "backward", backward)


def _patch_forward(patches: Patches, recorder: Recorder) -> None:
    """The outermost module call with gradients on: the rows that enter the model."""
    original: Callable[..., Any] = torch.nn.Module.__call__
    depth = [0]
    grad_enabled = torch.is_grad_enabled

    def call(self: torch.nn.Module, *args: Any, **kwargs: Any) -> Any:
        if depth[0] or not grad_enabled():
            return original(self, *args, **kwargs)
        recorder.on_forward(self, args, kwargs)
        depth[0] += 1
        try:
            return original(self, *args, **kwargs)
        finally:
            depth[0] -= 1

    patches.replace(torch.nn.Module, "__call__", call)


def _patch_ddp(patches: Patches, recorder: Recorder) -> None:
    original: Callable[..., Any] = DistributedDataParallel.__init__

    def init(self: DistributedDataParallel, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        recorder.on_ddp(self)

    patches.replace(DistributedDataParallel, "__init__", init)


def _patch_scaler(patches: Patches, recorder: Recorder) -> None:
    scaler_class = torch.amp.GradScaler
    scale: Callable[..., Any] = scaler_class.scale
    step: Callable[..., Any] = scaler_class.step

    def scaled(self: torch.amp.GradScaler, outputs: Any) -> Any:
        result = scale(self, outputs)
        if isinstance(result, torch.Tensor) and result is not outputs:
            recorder.on_scale(result, outputs)
        return result

    def stepped(self: torch.amp.GradScaler, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        recorder.before_scaler_step()
        result = step(self, optimizer, *args, **kwargs)
        if recorder.after_scaler_step(self, optimizer):
            raise StepLimitReached
        return result

    patches.replace(scaler_class, "scale", scaled)
    patches.replace(scaler_class, "step", stepped)


def install(recorder: Recorder) -> Patches:
    """Patch torch so that ``recorder`` sees every step; a no-op for the user's results."""
    patches = Patches()
    _patch_loaders(patches, LoaderTracker(recorder))
    _patch_backward(patches, recorder)
    _patch_forward(patches, recorder)
    _patch_ddp(patches, recorder)
    _patch_scaler(patches, recorder)

    def post_step(optimizer: torch.optim.Optimizer, args: Any, kwargs: Any) -> None:
        if recorder.on_post_step(optimizer):
            raise StepLimitReached

    patches.handle(register_optimizer_step_post_hook(post_step))
    return patches

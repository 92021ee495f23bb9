"""The per-rank recorder: per-step facts gathered from the hooks, written as JSON lines.

Every method called from a hook is fail-open: an exception inside it turns recording off with one
line on stderr, and the user's call proceeds untouched. A batch from a DataLoader and the rows
entering the model's forward count for a step once a ``backward()`` follows them: a batch peeked
at (``next(iter(loader))``) or evaluated is no training. A step only keeps references (its sample
indices, its losses and norms as tensors) in a ``Pending`` tuple; a flush (every ``FLUSH_EVERY``
steps and at exit) turns many steps' tensors into numbers at once and writes their lines, so a
step costs no device synchronisation and no formatting of its own.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import operator
import sys
import weakref
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any, NamedTuple

import torch
from torch.nn.modules.batchnorm import SyncBatchNorm, _BatchNorm

from ..hooks.failopen import fail_open
from . import records
from .digests import call_digests, to_ints
from .norms import gradients, split_norms, step_norms, to_floats

FLUSH_EVERY = 256


def local_batchnorm(models: Iterable[torch.nn.Module]) -> list[str]:
    """BatchNorm layers in training mode inside DDP models that keep per-rank statistics."""
    found = []
    for wrapper in models:
        model: torch.nn.Module = getattr(wrapper, "module", wrapper)
        for name, module in model.named_modules():
            local = isinstance(module, _BatchNorm) and not isinstance(module, SyncBatchNorm)
            if local and module.training:
                found.append(f"module.{name} ({type(module).__name__})".replace(". (", " ("))
    return found


def _plain(value: Any) -> int | str:
    """JSON for sample indices that are not ints: numpy or tensor integers, other keys."""
    try:
        return operator.index(value)
    except TypeError:
        return str(value)


def _params(optimizer: torch.optim.Optimizer) -> list[torch.Tensor]:
    return list(itertools.chain.from_iterable(g["params"] for g in optimizer.param_groups))


def _lr(value: Any) -> Any:
    """A learning rate as it is now: a tensor (``lr=torch.tensor(...)``, updated in place by
    schedulers) is copied on its device and read at the flush, not synchronised here."""
    return value.detach().clone() if isinstance(value, torch.Tensor) else value


_ENCODER = json.JSONEncoder(default=_plain, separators=(",", ":"))  # built once, not per row


class Batch(NamedTuple):
    """A batch handed to the script by a DataLoader iterator."""

    loader: tuple[int, int]  # (loader id, iteration)
    indices: list[int] | None
    size: int | None


class Pending(NamedTuple):
    """One recorded step before the flush: what it consumed, and its values as tensors."""

    step: int
    samples: list[int] | None
    batch: int | None
    digests: list[torch.Tensor] | None  # per forward call, one int64 per row; None: unknown
    losses: list[torch.Tensor] | None  # None: unknown (an explicit gradient, a non-scalar)
    backwards: int
    lrs: list[Any]  # floats, or tensor copies
    norms: tuple[torch.Tensor, int] | None  # per-tensor norms, number of gradients first
    skipped: bool
    loaders: list[tuple[int, int]]

    def row(
        self,
        loss: list[float],
        lrs: list[float],
        norms: tuple[float, float],
        digests: list[int] | None,
    ) -> dict[str, Any]:
        """The step's line, given its tensors' values."""
        grad_norm, param_norm = norms
        has_grads = not self.skipped and self.norms is not None and self.norms[1] > 0
        return {
            "kind": "step",
            "step": self.step,
            "samples": self.samples,
            "batch": self.batch,
            "digests": digests,
            "loss": sum(loss) if self.losses is not None else None,
            "backwards": self.backwards,
            "grad_norm": grad_norm if has_grads else None,
            "lr": lrs,
            "param_norm": param_norm if self.norms is not None else None,
            "skipped": self.skipped,
            "loaders": self.loaders,
        }


class Recorder:
    """Records the optimizer steps of this process into ``folder/rank<N>.jsonl``."""

    def __init__(
        self,
        folder: Path,
        limit: int | None,
        rank: int,
        world_size: int,
        run_id: str,
        script: str,
    ) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.out: IO[str] = open(folder / f"rank{rank}.jsonl", "w", encoding="utf-8")  # noqa: SIM115
        self.limit = limit
        self.active = True
        self.step = 0
        self.models: weakref.WeakSet[torch.nn.Module] = weakref.WeakSet()  # DDP instances
        self._buffer: list[Pending] = []
        self._scaled: tuple[int, torch.Tensor] | None = None
        self._stepped = False
        self.backwards = 0  # every backward() so far: tells a batch that trained from a peek
        self._batches: list[Batch] = []  # taken since the last backward(), not yet confirmed
        self._forwards: list[torch.Tensor] = []  # likewise, the forward calls' digests
        self._trains: weakref.WeakKeyDictionary[torch.nn.Module, bool] = weakref.WeakKeyDictionary()
        self._reset()
        self.write(records.header_line(rank, world_size, run_id, script))

    def _reset(self) -> None:
        self.samples: list[int] | None = []
        self.batch: int | None = 0
        self.used: list[tuple[int, int]] = []
        self._digests: list[torch.Tensor] = []
        self._losses: list[torch.Tensor] = []  # summed at the flush, not on the hot path
        self._loss_known = True
        self._backwards = 0

    # --- output -------------------------------------------------------------------------------
    def write(self, row: dict[str, Any]) -> None:
        self.out.write(_ENCODER.encode(row) + "\n")

    def flush(self) -> None:
        """Turn the buffered steps' tensors into numbers (one host copy per device and dtype)
        and write them."""
        pending = self._buffer
        losses = to_floats([step.losses or [] for step in pending])
        lrs = to_floats([step.lrs for step in pending])
        norms = split_norms([step.norms for step in pending])
        digests = to_ints([step.digests for step in pending])
        for step, loss, lr, pair, rows in zip(pending, losses, lrs, norms, digests, strict=True):
            self.write(step.row(loss, lr, pair, rows))
        pending.clear()
        self.out.flush()

    def close(self) -> None:
        """Write what is pending (at exit, or when the step limit is reached)."""
        if self.active:
            try:
                self.flush()
            except Exception as exc:
                self.fail(exc, "flush")
        if not self.out.closed:
            self.out.close()

    def note(self, text: str) -> None:
        self.write({"kind": "note", "text": text})

    def fail(self, exc: BaseException, where: str) -> None:
        """Turn recording off with one line; the script continues as if never recorded."""
        self.active = False
        line = f"recording failed in {where}: {type(exc).__name__}: {exc}"
        sys.stderr.write(f"[guards] warning: compare {line}; recording is off for this run\n")
        try:
            self.flush()  # the steps recorded before the failure are sound
        except Exception:
            self._buffer.clear()
        with contextlib.suppress(Exception):
            self.note(line)
            self.out.flush()

    # --- hooks --------------------------------------------------------------------------------
    @fail_open
    def on_backward(self, loss: torch.Tensor, explicit_gradient: bool) -> None:
        self._backwards += 1
        self.backwards += 1
        self._confirm()
        if explicit_gradient or loss.numel() != 1:
            self._loss_known = False
            return
        if self._scaled is not None and self._scaled[0] == id(loss):
            loss = self._scaled[1]  # the loss before GradScaler multiplied it
        self._losses.append(loss.detach())

    @fail_open
    def on_ddp(self, model: torch.nn.Module) -> None:
        self.models.add(model)

    @fail_open
    def on_scale(self, scaled: torch.Tensor, original: torch.Tensor) -> None:
        self._scaled = (id(scaled), original.detach())

    def before_scaler_step(self) -> None:
        self._stepped = False

    def on_post_step(self, optimizer: torch.optim.Optimizer) -> bool:
        """Record the step; True when the step limit is reached (the caller stops the run)."""
        self._stepped = True
        return bool(self._finish_step(optimizer, False))

    @fail_open
    def after_scaler_step(self, scaler: torch.amp.GradScaler, optimizer: Any) -> bool:
        """If GradScaler skipped ``optimizer.step()`` (inf/NaN gradients), record a skipped step;
        True when the step limit is reached."""
        if self._stepped or not scaler.is_enabled():
            return False
        return bool(self._finish_step(optimizer, True))

    @fail_open
    def _finish_step(self, optimizer: torch.optim.Optimizer, skipped: bool) -> bool:
        if self.step == 0:
            self.write({"kind": "batchnorm", "layers": local_batchnorm(list(self.models))})
        if self._backwards == 0:  # no backward() seen (autograd.backward): batches count as taken
            self._confirm()
        # one fused kernel for both; torch.optim's optimizers leave .grad as it was before step()
        params = _params(optimizer)
        self._buffer.append(
            Pending(
                self.step,
                self.samples if self.used else None,  # no DataLoader batch: unknown
                self.batch if self.used else None,
                self._digests or None,
                self._losses if self._loss_known and self._losses else None,
                self._backwards,
                [_lr(group["lr"]) for group in optimizer.param_groups],
                step_norms([] if skipped else gradients(params), params),
                skipped,
                self.used,
            )
        )
        self.step += 1
        self._reset()
        reached = self.limit is not None and self.step >= self.limit
        if reached or len(self._buffer) >= FLUSH_EVERY:
            self.flush()
        if reached:
            self.write({"kind": "end", "reason": "limit", "steps": self.step})
            self.close()
            self.active = False
        return reached

    @fail_open
    def on_batch(
        self, loader: tuple[int, int], indices: list[int] | None, size: int | None
    ) -> None:
        """A batch reached the script: its dataset indices (None: unknown) and sample count. It
        counts for the step once a backward() follows it (see ``retract``)."""
        self._batches.append(Batch(loader, indices, size))

    @fail_open
    def on_forward(
        self, module: torch.nn.Module, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> None:
        """An outermost module was called with gradients on: if it is a model (it has parameters;
        a loss module has none), the row digests of the data it was given."""
        trains = self._trains.get(module)
        if trains is None:
            trains = self._trains[module] = next(module.parameters(), None) is not None
        if trains:
            digests = call_digests(args, kwargs)
            if digests is not None:
                self._forwards.append(digests)

    @fail_open
    def retract(self, loader: int, before: int) -> None:
        """Forget the batches of ``loader``'s iterations before ``before`` that no backward()
        followed: a peek (``next(iter(loader))``) or an evaluation pass is no training step."""
        self._batches = [b for b in self._batches if b.loader[0] != loader or b.loader[1] >= before]

    def _confirm(self) -> None:
        """The batches and forward calls since the previous backward() trained this step."""
        for batch in self._batches:
            if batch.loader not in self.used:
                self.used.append(batch.loader)
            if batch.indices is None or self.samples is None:
                self.samples = None
            else:
                self.samples.extend(batch.indices)
            count = len(batch.indices) if batch.indices is not None else batch.size
            self.batch = None if count is None or self.batch is None else self.batch + count
        self._batches.clear()
        self._digests.extend(self._forwards)
        self._forwards.clear()

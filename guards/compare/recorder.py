"""The per-rank recorder: per-step facts gathered from the hooks, written as JSON lines.

Every method called from a hook is fail-open: an exception inside it turns recording off with one
line on stderr, and the user's call proceeds untouched. Values stay tensors until a flush (every
``FLUSH_EVERY`` steps and at exit), so a step costs no device synchronisation of its own.
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
from typing import IO, Any

import torch
from torch.nn.modules.batchnorm import SyncBatchNorm, _BatchNorm

from . import records
from .failopen import fail_open
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


_ENCODER = json.JSONEncoder(default=_plain, separators=(",", ":"))  # built once, not per row


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
        self._buffer: list[dict[str, Any]] = []
        self._scaled: tuple[int, torch.Tensor] | None = None
        self._stepped = False
        self._reset()
        self.write(records.header_line(rank, world_size, run_id, script))

    def _reset(self) -> None:
        self.samples: list[int] | None = []
        self.batch: int | None = 0
        self.used: list[tuple[int, int]] = []
        self._losses: list[torch.Tensor] = []  # summed at the flush, not on the hot path
        self._loss_known = True
        self._backwards = 0

    # --- output -------------------------------------------------------------------------------
    def write(self, row: dict[str, Any]) -> None:
        self.out.write(_ENCODER.encode(row) + "\n")

    def flush(self) -> None:
        """Turn the buffered steps' tensors into numbers (one host copy per device and dtype)
        and write them."""
        losses = to_floats([row["loss"] or [] for row in self._buffer])
        norms = split_norms([row.pop("norms") for row in self._buffer])
        for row, loss, (grad_norm, param_norm) in zip(self._buffer, losses, norms, strict=True):
            row["loss"] = sum(loss) if row["loss"] is not None else None
            row["grad_norm"] = grad_norm if row["grad_norm"] else None
            row["param_norm"] = param_norm if row["param_norm"] else None
            self.write(row)
        self._buffer.clear()
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
        # one fused kernel for both; torch.optim's optimizers leave .grad as it was before step()
        params = _params(optimizer)
        grads = [] if skipped else gradients(params)
        with torch.no_grad():
            norms = step_norms(grads, params)
        self._buffer.append(
            {
                "kind": "step",
                "step": self.step,
                "samples": self.samples,
                "batch": self.batch,
                "loss": self._losses if self._loss_known and self._losses else None,
                "backwards": self._backwards,
                "grad_norm": not skipped and norms is not None and norms[1] > 0,
                "lr": [float(group["lr"]) for group in optimizer.param_groups],
                "param_norm": norms is not None,
                "norms": norms,  # (per-tensor norms, gradient count): two numbers at the flush
                "skipped": skipped,
                "loaders": self.used,
            }
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
        """A batch reached the script: its dataset indices (None: unknown) and sample count."""
        if loader not in self.used:
            self.used.append(loader)
        if indices is None or self.samples is None:
            self.samples = None
        else:
            self.samples.extend(indices)
        count = len(indices) if indices is not None else size
        self.batch = None if count is None or self.batch is None else self.batch + count

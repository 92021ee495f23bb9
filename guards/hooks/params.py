"""Parameter checks among replicas, hashed on each replica.

Only what the job keeps equal is checked: the parameters of each DDP-wrapped model (and its
buffers when DDP does not re-broadcast them, BatchNorm statistics aside), compared among the
ranks of that model's process group; and the parameters whose gradients the job all-reduces
itself (``handmade``), among the ranks of that group. Parameters never reduced (an ensemble,
pipeline stages holding different layers, model-parallel or FSDP shards) are never compared.

A model is checked every ``every`` steps of the optimizers that hold its parameters, and once
more at the end of the run (``finish``), so a run shorter than ``every`` steps is still checked.
Per-tensor hashes are kept for ``KEEP_SECONDS`` so the report can name the differing tensors.
"""

from __future__ import annotations

import collections
import functools
import time
import weakref
from array import array
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import torch
import torch.distributed as dist
from torch.distributed import distributed_c10d
from torch.nn.modules.batchnorm import _BatchNorm
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.optim.optimizer import register_optimizer_step_post_hook

from ..record.hashing import hashable, tensor_hash
from ..record.ledger import roll
from . import ddp, failopen
from .handmade import HandReplicas

PUBLISHED = 4  # digests per model in a summary
KEEP_SECONDS = 120.0  # per-tensor hashes kept for the report
KEEP_BYTES = 16 << 20  # ... within this much memory per model (the latest two always kept)


def named_tensors(model: DDP, number: int) -> Iterator[tuple[str, torch.Tensor]]:
    """The tensors DDP keeps equal on the replicas of ``model``."""
    prefix = f"model{number}." if number else ""
    ignored = {f"module.{name}" for name in getattr(model, "parameters_to_ignore", ())}
    for name, p in model.named_parameters():
        if name not in ignored and hashable(p):
            yield prefix + name, p
    if model.broadcast_buffers:
        return  # DDP re-broadcasts buffers from rank 0 at every forward
    for mod_name, module in model.named_modules():
        if isinstance(module, _BatchNorm):
            continue  # running statistics are per-rank by design without SyncBatchNorm
        for name, buf in module.named_buffers(recurse=False):
            full = f"{mod_name}.{name}" if mod_name else name
            if full not in ignored and hashable(buf):
                yield prefix + full, buf


def _ddp_parameters() -> set[int]:
    """Ids of the parameters of this process's DDP models (checked as DDP models)."""
    return {id(p) for _, model in ddp.replicas() for p in model.parameters()}


def hash_all(tensors: list[torch.Tensor]) -> list[int]:
    """``tensor_hash`` of each tensor, with one device synchronization per device."""
    values = [tensor_hash(t) for t in tensors]
    by_device: dict[torch.device, list[int]] = {}
    for i, value in enumerate(values):
        by_device.setdefault(value.device, []).append(i)
    hashes = [0] * len(values)
    for indices in by_device.values():
        stacked = torch.stack([values[i] for i in indices]).tolist()
        for i, h in zip(indices, stacked, strict=True):
            hashes[i] = int(h)
    return hashes


@dataclass
class Check:
    """The hashes of one model's tensors after some optimizer step."""

    step: int
    digest: int
    names: tuple[str, ...]
    hashes: array[int]
    at: float


class ModelChecks:
    """The checks of one model on this rank."""

    def __init__(self, ranks: list[int]) -> None:
        self.ranks = ranks
        self.steps = 0
        self.recent: collections.deque[Check] = collections.deque()
        self.final: Check | None = None

    def keep(self, check: Check) -> None:
        if self.recent and self.recent[-1].names == check.names:
            check.names = self.recent[-1].names  # one copy of unchanged names
        self.recent.append(check)
        now = time.monotonic()
        size = sum(8 * len(c.hashes) for c in self.recent)
        while len(self.recent) > 2 and (
            now - self.recent[0].at > KEEP_SECONDS or size > KEEP_BYTES
        ):
            size -= 8 * len(self.recent.popleft().hashes)

    def published(self) -> list[Check]:
        """The latest checks, as peers compare them."""
        return list(self.recent)[-PUBLISHED:]

    def find(self, step: int, final: bool) -> Check | None:
        if final:
            return self.final
        for check in list(self.recent):
            if check.step == step:
                return check
        return None


class ParamChecker:
    """Counts optimizer steps per replicated model and hashes each one every ``every`` steps."""

    def __init__(self, every: int) -> None:
        self.every = every
        self.models: dict[str, ModelChecks] = {}
        self.hand = HandReplicas()
        # optimizer -> keys of the models it steps; weakly keyed, recomputed when groups change
        self._stepped: weakref.WeakKeyDictionary[
            torch.optim.Optimizer, tuple[int, list[tuple[str, list[int]]]]
        ] = weakref.WeakKeyDictionary()

    def _models_of(self, optimizer: torch.optim.Optimizer) -> list[tuple[str, list[int]]]:
        """(key, replica ranks) of the DDP models whose parameters ``optimizer`` steps."""
        known = self._stepped.get(optimizer)
        if known is not None and known[0] == len(optimizer.param_groups):
            return known[1]
        held = {id(p) for group in optimizer.param_groups for p in group["params"]}
        models = [
            (replica.key, replica.ranks)
            for replica, model in ddp.replicas()
            if any(id(p) in held for p in model.parameters())
        ]
        self._stepped[optimizer] = (len(optimizer.param_groups), models)
        return models

    def _sources(self) -> list[tuple[str, list[int], list[tuple[str, torch.Tensor]]]]:
        """(key, replica ranks, named tensors) of every replicated model of this process."""
        found = [
            (replica.key, replica.ranks, list(named_tensors(model, replica.number)))
            for replica, model in ddp.replicas()
        ]
        for hand in self.hand.replicas.values():
            named = hand.named_tensors()
            if named:
                found.append((hand.key, hand.ranks, named))
        return found

    def on_step(self, optimizer: torch.optim.Optimizer, *_: object) -> None:
        """Global optimizer step post-hook; fails open."""
        if not failopen.SWITCH.on:
            return
        try:
            models = self._models_of(optimizer)
            for replica in self.hand.on_step(optimizer, _ddp_parameters):
                models = [*models, (replica.key, replica.ranks)]
            due = []
            for key, ranks in models:
                checks = self.models.get(key)
                if checks is None:
                    checks = self.models[key] = ModelChecks(ranks)
                checks.steps += 1
                if self.every and checks.steps % self.every == 0:
                    due.append(key)
        except Exception as exc:
            failopen.fail("optimizer-step hook", exc)
            return
        if due:
            self.check(due)

    def check(self, keys: list[str] | None = None, final: bool = False) -> None:
        """Hash the models ``keys`` (all live ones by default); fails open."""
        if not failopen.SWITCH.on:
            return
        try:
            for key, ranks, named in self._sources():
                if keys is not None and key not in keys:
                    continue
                checks = self.models.get(key)
                if checks is None:
                    checks = self.models[key] = ModelChecks(ranks)
                hashes = hash_all([t for _, t in named])
                digest = 0
                for h in hashes:
                    digest = roll(digest, h & ((1 << 63) - 1))
                check = Check(
                    checks.steps,
                    digest,
                    tuple(n for n, _ in named),
                    array("q", hashes),
                    time.monotonic(),
                )
                if final:
                    checks.final = check
                else:
                    checks.keep(check)
        except Exception as exc:
            failopen.fail("parameter hashing", exc)

    def install(self) -> None:
        """Count optimizer steps, and check once more when the process group is destroyed (the
        usual end of a script, while its models are still alive). Nothing when ``every`` is 0."""
        if not self.every:
            return
        register_optimizer_step_post_hook(self.on_step)
        original = dist.destroy_process_group

        @functools.wraps(original)
        def destroy_process_group(*args: Any, **kwargs: Any) -> Any:
            self.finish()
            return original(*args, **kwargs)

        dist.destroy_process_group = destroy_process_group
        if distributed_c10d.destroy_process_group is original:
            distributed_c10d.destroy_process_group = destroy_process_group

    def finish(self) -> None:
        """The last check, at the end of the run (repeatable: the latest one is compared)."""
        if self.every:
            self.check(final=True)

    def details(self, model: str, step: int, final: bool) -> dict[str, int] | None:
        """Per-tensor hashes of a model's check after ``step`` (or its final one)."""
        checks = self.models.get(model)
        if checks is None:
            return None
        check = checks.find(step, final)
        if check is None:
            return None
        return dict(zip(check.names, check.hashes, strict=True))

"""Replicas the job makes by hand: parameters whose gradients it all-reduces itself.

A job that averages gradients itself (``dist.all_reduce(p.grad)`` for each parameter, no DDP)
is data-parallel: those parameters must stay equal on the ranks of the group it reduces over.
The collective wrapper notes the storage of each tensor given to ``all_reduce``, weakly (nothing
is kept alive, and a storage freed and reallocated is not mistaken for the old one). At the first
steps of an optimizer, a parameter outside DDP models whose gradient lives in such a storage
(``p.grad``, ``p.grad.data``, or a view into a flat buffer reduced whole) becomes a replica on
that group, for the rest of the run. Parameters whose gradients are never reduced (an ensemble,
pipeline stages) are never compared.
"""

from __future__ import annotations

import gc
import weakref
from collections.abc import Callable
from typing import Any

import torch

SCANS = 4  # optimizer steps at which an optimizer's parameters are examined
LIMIT = 8192  # storages noted at most between two examinations


class Reduced:
    """The storages given to ``all_reduce`` recently, by the group they were reduced over."""

    __slots__ = ("_seen", "on")

    def __init__(self) -> None:
        self.on = True  # whether the collective wrapper notes anything (read on the hot path)
        self._seen: dict[int, tuple[weakref.ref[Any], str, list[int]]] = {}

    def note(self, tensor: Any, group: str, ranks: list[int]) -> None:
        """``tensor`` was all-reduced over ``group``."""
        if not isinstance(tensor, torch.Tensor) or tensor.is_sparse:
            return
        storage = tensor.untyped_storage()
        if len(self._seen) >= LIMIT:
            self.prune()
            if len(self._seen) >= LIMIT:
                return
        self._seen[id(storage)] = (weakref.ref(storage), group, ranks)

    def group_of(self, tensor: torch.Tensor) -> tuple[str, list[int]] | None:
        """The group ``tensor``'s storage was all-reduced over, if it was."""
        storage = tensor.untyped_storage()
        entry = self._seen.get(id(storage))
        if entry is None or entry[0]() is not storage:
            return None
        return entry[1], entry[2]

    def prune(self) -> None:
        """Forget storages that no longer exist."""
        self._seen = {k: v for k, v in self._seen.items() if v[0]() is not None}

    def clear(self) -> None:
        self._seen.clear()


REDUCED = Reduced()


def module_names(params: list[torch.nn.Parameter]) -> dict[int, str]:
    """``id(p)`` to the shortest name ``p`` has in a live module that is no module's child
    (``2.bias``, ``encoder.fc.weight``); parameters in no module are left out."""
    # type(), not isinstance(): isinstance reads __class__, which some objects warn about
    modules = [m for m in gc.get_objects() if issubclass(type(m), torch.nn.Module)]
    children = {id(c) for m in modules for c in m.children()}
    wanted = {id(p) for p in params}
    names: dict[int, str] = {}
    for root in modules:
        if id(root) in children:
            continue
        for name, p in root.named_parameters():
            if id(p) in wanted:
                old = names.get(id(p))
                if old is None or (len(name), name) < (len(old), old):
                    names[id(p)] = name
    return names


class HandReplica:
    """The parameters of one optimizer whose gradients are reduced over one group."""

    def __init__(self, key: str, ranks: list[int]) -> None:
        self.key = key  # the same on every replica
        self.ranks = ranks
        self._params: list[tuple[tuple[int, int], weakref.ref[torch.nn.Parameter]]] = []
        self._names: list[str] = []

    def add(self, found: list[tuple[tuple[int, int], torch.nn.Parameter]], prefix: str) -> None:
        """Add parameters found at positions ``(group, index)`` of an optimizer, kept in
        optimizer order (the same on every rank), named after their modules."""
        known = {pos for pos, _ in self._params}
        new = [(pos, p) for pos, p in found if pos not in known]
        if not new:
            return
        everything = [(pos, p) for pos, ref in self._params if (p := ref()) is not None] + new
        everything.sort(key=lambda item: item[0])
        names = module_names([p for _, p in everything])
        self._params = [(pos, weakref.ref(p)) for pos, p in everything]
        self._names = [
            names.get(id(p), f"{prefix}.param_groups[{g}].params[{i}]") for (g, i), p in everything
        ]

    def named_tensors(self) -> list[tuple[str, torch.Tensor]]:
        """The parameters with their names; none once any of them is gone (the script ended:
        what is left would not match the other ranks' list)."""
        out: list[tuple[str, torch.Tensor]] = []
        for name, (_, ref) in zip(self._names, self._params, strict=True):
            p = ref()
            if p is None:
                return []
            out.append((name, p))
        return out


class _Stepped:
    """What is known of one optimizer (kept in its ``__dict__``: one lookup per step)."""

    __slots__ = ("number", "replicas", "scans")

    def __init__(self, number: int) -> None:
        self.number = number
        self.scans = SCANS
        self.replicas: list[HandReplica] = []


class HandReplicas:
    """The hand-made replicas of this process, found at the first steps of each optimizer."""

    def __init__(self) -> None:
        self.replicas: dict[str, HandReplica] = {}
        self._optimizers = 0
        self._scanning: weakref.WeakSet[torch.optim.Optimizer] = weakref.WeakSet()

    def on_step(
        self, optimizer: torch.optim.Optimizer, excluded: Callable[[], set[int]]
    ) -> list[HandReplica]:
        """The hand-made replicas ``optimizer`` steps; ``excluded``: ids of DDP parameters."""
        known = optimizer.__dict__.get("_guards_hand")
        if not isinstance(known, _Stepped):
            known = optimizer.__dict__["_guards_hand"] = _Stepped(self._optimizers)
            self._optimizers += 1
            self._scanning.add(optimizer)
            REDUCED.on = True
        if known.scans:
            known.scans -= 1
            self._scan(optimizer, known, excluded())
            if not known.scans:
                self._scanning.discard(optimizer)
            if not self._scanning:
                REDUCED.on = False  # every optimizer examined: the hot path notes nothing
                REDUCED.clear()
            else:
                REDUCED.prune()
        return known.replicas

    def _scan(self, optimizer: torch.optim.Optimizer, known: _Stepped, excluded: set[int]) -> None:
        found: dict[tuple[str, tuple[int, ...]], list[Any]] = {}
        for g, group in enumerate(optimizer.param_groups):
            for i, p in enumerate(group["params"]):
                if p.grad is None or id(p) in excluded:
                    continue
                reduced = REDUCED.group_of(p.grad)
                if reduced is not None:
                    found.setdefault((reduced[0], tuple(reduced[1])), []).append(((g, i), p))
        for (group_name, ranks), params in found.items():
            key = f"{group_name}#grads{known.number}"
            replica = self.replicas.get(key)
            if replica is None:
                replica = self.replicas[key] = HandReplica(key, list(ranks))
                known.replicas.append(replica)
            replica.add(params, f"optimizer{known.number}")

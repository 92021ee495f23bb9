"""Order-sensitive hashes of parameters and buffers, computed on their device.

``torch.hash_tensor`` is not used: it xor-reduces, so it cannot see two swapped elements.
"""

from __future__ import annotations

import collections
from collections.abc import Iterator

import torch
from torch.nn.modules.batchnorm import _BatchNorm

from . import ddp

_INT_VIEW = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}
_MULT = 0x9E3779B97F4A7C1  # odd, below 2**63
_OFFSET = 0x5BD1E995


def tensor_hash(t: torch.Tensor) -> torch.Tensor:
    """A 0-d int64 tensor on ``t``'s device; never writes to ``t``."""
    with torch.no_grad():
        x = t.detach()
        if x.is_complex():
            x = torch.view_as_real(x)
        x = x.reshape(-1)
        if x.dtype == torch.bool:
            x = x.view(torch.uint8)
        bits = x.view(_INT_VIEW[x.element_size()]).to(torch.int64)
        weights = torch.arange(1, bits.numel() + 1, device=bits.device, dtype=torch.int64)
        weights.mul_(_MULT)
        return ((bits + _OFFSET) * weights).sum() + bits.numel()


def _ddp_tensors() -> Iterator[tuple[str, torch.Tensor]]:
    for index, model in enumerate(ddp.models):
        prefix = f"model{index}." if index else ""
        yield from ((prefix + n, p) for n, p in model.named_parameters())
        if model.broadcast_buffers:
            continue  # DDP re-broadcasts buffers from rank 0 at every forward
        for mod_name, module in model.named_modules():
            if isinstance(module, _BatchNorm):
                continue  # running statistics are per-rank by design without SyncBatchNorm
            for name, buf in module.named_buffers(recurse=False):
                yield f"{prefix}{mod_name}.{name}" if mod_name else prefix + name, buf


def _optimizer_tensors(
    optimizers: list[torch.optim.Optimizer],
) -> Iterator[tuple[str, torch.Tensor]]:
    for o, opt in enumerate(optimizers):
        for g, group in enumerate(opt.param_groups):
            for i, p in enumerate(group["params"]):
                yield f"optimizer{o}.param_groups[{g}].params[{i}]", p


class ParamChecker:
    """Counts optimizer steps and hashes the replicated tensors every ``every`` steps."""

    def __init__(self, every: int) -> None:
        self.every = every
        self.steps = 0
        self.optimizers: list[torch.optim.Optimizer] = []
        self.results: collections.deque[tuple[int, int, list[str], list[int]]] = collections.deque(
            maxlen=4
        )

    def on_step(self, optimizer: torch.optim.Optimizer, *_: object) -> None:
        """Global optimizer step post-hook."""
        if not any(o is optimizer for o in self.optimizers):
            self.optimizers.append(optimizer)
        self.steps += 1
        if self.every and self.steps % self.every == 0:
            self.check()

    def check(self) -> None:
        named = list(_ddp_tensors()) if ddp.models else list(_optimizer_tensors(self.optimizers))
        if not named:
            return
        values = [tensor_hash(t) for _, t in named]
        by_device: dict[torch.device, list[int]] = {}
        for i, value in enumerate(values):
            by_device.setdefault(value.device, []).append(i)
        hashes = [0] * len(values)
        for indices in by_device.values():
            stacked = torch.stack([values[i] for i in indices]).tolist()  # one sync per device
            for i, h in zip(indices, stacked, strict=True):
                hashes[i] = h
        digest = hash(tuple(hashes))
        self.results.append((self.steps, digest, [n for n, _ in named], hashes))

    def summary(self) -> list[list[int]]:
        return [[step, digest] for step, digest, _, _ in list(self.results)]

    def details(self, step: int) -> dict[str, int] | None:
        for s, _, names, hashes in list(self.results):
            if s == step:
                return dict(zip(names, hashes, strict=True))
        return None

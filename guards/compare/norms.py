"""Norms and loss values kept as tensors on the hot path, turned into floats in one batch.

A step launches one fused ``_foreach_norm`` over its gradients and parameters and stacks the
per-tensor norms into one vector on the device (two dispatches, no synchronisation, whatever the
number of parameters). A flush copies the vectors of many steps to the host at once (one copy per
device) and reduces them there, in float64, to a gradient norm and a parameter norm per step.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Sequence
from typing import Any

import torch

_foreach_norm: Callable[..., list[torch.Tensor]] | None = getattr(torch, "_foreach_norm", None)
_grad = operator.attrgetter("grad")
_present = functools.partial(operator.is_not, None)


def gradients(params: Sequence[torch.Tensor]) -> list[torch.Tensor]:
    """The gradients that are set, in parameter order (the loop runs in C, not in Python)."""
    return list(filter(_present, map(_grad, params)))


def _stacked(tensors: list[torch.Tensor]) -> torch.Tensor:
    """The L2 norm of each tensor, in float32, stacked on the first tensor's device: one fused
    kernel per dtype, or one tensor at a time where the fused kernel refuses (several devices)."""
    if _foreach_norm is not None:
        try:
            return torch.stack(_foreach_norm(tensors, 2, dtype=torch.float32))
        except (RuntimeError, NotImplementedError):
            pass
    device = tensors[0].device
    return torch.stack(
        [torch.linalg.vector_norm(t, dtype=torch.float32).to(device) for t in tensors]
    )


def step_norms(
    grads: list[torch.Tensor], params: list[torch.Tensor]
) -> tuple[torch.Tensor, int] | None:
    """The L2 norm of each gradient then of each parameter as one float32 vector on the first
    tensor's device (no synchronisation), and the number of gradients in it; sparse tensors are
    left out. Gradient mode is off inside (a toggle, cheaper than a ``no_grad`` block) and
    restored after."""
    if not params:
        return None
    enabled = torch.is_grad_enabled()
    torch._C._set_grad_enabled(False)
    try:
        try:
            return _stacked(grads + params), len(grads)
        except (RuntimeError, NotImplementedError):  # a sparse tensor: rare, the slow way
            grads = [g for g in grads if not g.is_sparse]
            params = [p for p in params if not p.is_sparse]
            return (_stacked(grads + params), len(grads)) if params else None
    finally:
        torch._C._set_grad_enabled(enabled)


def split_norms(vectors: list[tuple[torch.Tensor, int] | None]) -> list[tuple[float, float]]:
    """For each ``(vector, first)``: ``(L2 of vector[:first], L2 of vector[first:])``, summed in
    float64 on the host with one copy per device; ``None`` gives ``(nan, nan)``."""
    out = [(float("nan"), float("nan"))] * len(vectors)
    by_device: dict[torch.device, list[int]] = {}
    for position, item in enumerate(vectors):
        if item is not None:
            by_device.setdefault(item[0].device, []).append(position)
    for positions in by_device.values():
        parts = [vectors[i] for i in positions]
        flat = torch.cat([v for v, _ in parts]).to("cpu", torch.float64).square()  # type: ignore[misc]
        segments = []
        for v, first in parts:  # type: ignore[misc]
            segments += [first, v.numel() - first]
        ids = torch.repeat_interleave(torch.arange(len(segments)), torch.tensor(segments))
        sums = torch.zeros(len(segments), dtype=torch.float64).index_add_(0, ids, flat)
        pairs = sums.sqrt().view(-1, 2).tolist()
        for position, pair in zip(positions, pairs, strict=True):
            out[position] = (pair[0], pair[1])
    return out


def to_floats(groups: list[list[Any]]) -> list[list[float]]:
    """The values in ``groups`` (numbers, or one-element tensors) as floats, in the same shape,
    with one host copy per device, dtype and shape of the tensors present."""
    flat = [x for group in groups for x in group]
    values: list[Any] = [x if isinstance(x, torch.Tensor) else float(x) for x in flat]
    kinds: dict[tuple[torch.device, torch.dtype, torch.Size], list[int]] = {}
    for position, value in enumerate(values):
        if isinstance(value, torch.Tensor):
            kinds.setdefault((value.device, value.dtype, value.shape), []).append(position)
    for positions in kinds.values():
        stacked = torch.stack([flat[i] for i in positions]).double().flatten().tolist()
        for position, number in zip(positions, stacked, strict=True):
            values[position] = number
    out, start = [], 0
    for group in groups:
        out.append(values[start : start + len(group)])
        start += len(group)
    return out

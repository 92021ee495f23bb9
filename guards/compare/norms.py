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


def _each_norm(tensors: list[torch.Tensor]) -> list[torch.Tensor]:
    device = tensors[0].device
    if _foreach_norm is not None and all(t.device == device for t in tensors):
        # one fused kernel per dtype, accumulated in float32 (bf16 norms are too coarse)
        return list(_foreach_norm(tensors, 2, dtype=torch.float32))
    return [torch.linalg.vector_norm(t, dtype=torch.float32).to(device) for t in tensors]


def step_norms(
    grads: list[torch.Tensor], params: list[torch.Tensor]
) -> tuple[torch.Tensor, int] | None:
    """The L2 norm of each gradient then of each parameter as one float32 vector on the first
    tensor's device (no synchronisation), and the number of gradients in it; sparse tensors are
    left out. Call under ``torch.no_grad()``."""
    if not params:
        return None
    try:
        return torch.stack(_each_norm(grads + params)), len(grads)
    except (RuntimeError, NotImplementedError):  # a sparse tensor: rare, the slow way
        grads = [g for g in grads if not g.is_sparse]
        params = [p for p in params if not p.is_sparse]
        return (torch.stack(_each_norm(grads + params)), len(grads)) if params else None


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


def to_floats(groups: list[list[torch.Tensor]]) -> list[list[Any]]:
    """The values of the one-element tensors in ``groups`` as floats, in the same shape, with
    one host copy per device, dtype and shape present."""
    flat = [t for group in groups for t in group]
    kinds: dict[tuple[torch.device, torch.dtype, torch.Size], list[int]] = {}
    for position, tensor in enumerate(flat):
        kinds.setdefault((tensor.device, tensor.dtype, tensor.shape), []).append(position)
    values: list[Any] = [None] * len(flat)
    for positions in kinds.values():
        stacked = torch.stack([flat[i] for i in positions]).double().flatten().tolist()
        for position, value in zip(positions, stacked, strict=True):
            values[position] = value
    out, start = [], 0
    for group in groups:
        out.append(values[start : start + len(group)])
        start += len(group)
    return out

"""Norms and loss values kept as tensors on the hot path, turned into floats in one batch.

A step launches one fused ``_foreach_norm`` for the gradients and one for the parameters and
keeps the per-tensor results; a flush stacks the tensors of many steps at once and copies them to
the host with a single synchronisation.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

_foreach_norm: Callable[..., list[torch.Tensor]] | None = getattr(torch, "_foreach_norm", None)


def per_tensor_norms(tensors: list[torch.Tensor]) -> list[torch.Tensor]:
    """The L2 norm of each (dense) tensor, as 0-dim tensors, in order (no synchronisation)."""
    if not tensors:
        return []
    device = tensors[0].device
    with torch.no_grad():
        if _foreach_norm is not None and all(t.device == device for t in tensors):
            return list(_foreach_norm(tensors))  # one fused kernel per dtype
        return [torch.linalg.vector_norm(t) for t in tensors]


def to_floats(groups: list[list[torch.Tensor]]) -> list[list[float]]:
    """The values of every 0-dim tensor in ``groups``, in the same shape, with one host copy
    when they share a device and dtype."""
    flat = [t for group in groups for t in group]
    if not flat:
        return [[] for _ in groups]
    same = all(t.device == flat[0].device and t.dtype == flat[0].dtype for t in flat)
    if same:
        values = torch.stack([t if t.dim() == 0 else t.reshape(()) for t in flat]).double().tolist()
    else:
        values = [float(t) for t in flat]
    out, start = [], 0
    for group in groups:
        out.append(values[start : start + len(group)])
        start += len(group)
    return out


def l2(values: list[float]) -> float | None:
    """The L2 norm of a list of per-tensor norms; None for no tensors."""
    return math.sqrt(sum(v * v for v in values)) if values else None

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
            # one fused kernel per dtype, accumulated in float32 (bf16 norms are too coarse)
            return list(_foreach_norm(tensors, 2, dtype=torch.float32))
        return [torch.linalg.vector_norm(t, dtype=torch.float32) for t in tensors]


def to_floats(groups: list[list[torch.Tensor]]) -> list[list[float]]:
    """The values of every 0-dim tensor in ``groups``, in the same shape: one stack and one host
    copy per device and dtype present."""
    flat = [t for group in groups for t in group]
    kinds: dict[tuple[torch.device, torch.dtype], list[int]] = {}
    for position, tensor in enumerate(flat):
        kinds.setdefault((tensor.device, tensor.dtype), []).append(position)
    values = [0.0] * len(flat)
    for positions in kinds.values():
        stacked = torch.stack(
            [flat[i] if flat[i].dim() == 0 else flat[i].reshape(()) for i in positions]
        )
        for position, value in zip(positions, stacked.double().tolist(), strict=True):
            values[position] = value
    out, start = [], 0
    for group in groups:
        out.append(values[start : start + len(group)])
        start += len(group)
    return out


def l2(values: list[float]) -> float | None:
    """The L2 norm of a list of per-tensor norms; None for no tensors."""
    return math.sqrt(sum(v * v for v in values)) if values else None

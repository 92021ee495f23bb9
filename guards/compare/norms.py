"""Norms and loss values kept as tensors on the hot path, turned into floats in one batch.

A step launches one fused ``_foreach_norm`` over its gradients and parameters and reduces the
result to two numbers on the device; a flush stacks the tensors of many steps at once and copies
them to the host with one synchronisation per device and dtype.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

_foreach_norm: Callable[..., list[torch.Tensor]] | None = getattr(torch, "_foreach_norm", None)


def per_tensor_norms(tensors: list[torch.Tensor]) -> list[torch.Tensor]:
    """The L2 norm of each (dense) tensor, as 0-dim tensors, in order (no synchronisation).
    Call under ``torch.no_grad()``."""
    if not tensors:
        return []
    device = tensors[0].device
    if _foreach_norm is not None and all(t.device == device for t in tensors):
        # one fused kernel per dtype, accumulated in float32 (bf16 norms are too coarse)
        return list(_foreach_norm(tensors, 2, dtype=torch.float32))
    return [torch.linalg.vector_norm(t, dtype=torch.float32) for t in tensors]


def to_floats(groups: list[list[torch.Tensor]]) -> list[list[Any]]:
    """The values of the tensors in ``groups`` (0-dim: a float; 1-dim: a list of floats), in
    the same shape, with one host copy per device, dtype and shape present."""
    flat = [t for group in groups for t in group]
    kinds: dict[tuple[torch.device, torch.dtype, torch.Size], list[int]] = {}
    for position, tensor in enumerate(flat):
        kinds.setdefault((tensor.device, tensor.dtype, tensor.shape), []).append(position)
    values: list[Any] = [None] * len(flat)
    for positions in kinds.values():
        stacked = torch.stack([flat[i] for i in positions]).double().tolist()
        for position, value in zip(positions, stacked, strict=True):
            values[position] = value
    out, start = [], 0
    for group in groups:
        out.append(values[start : start + len(group)])
        start += len(group)
    return out


def split_norms(norms: list[torch.Tensor], first: int) -> torch.Tensor | None:
    """``[L2 of norms[:first], L2 of norms[first:]]`` as one device tensor (a few kernels,
    whatever the number of tensors)."""
    if not norms:
        return None
    squares = torch.stack(norms).square()
    return torch.stack([squares[:first].sum(), squares[first:].sum()]).sqrt()

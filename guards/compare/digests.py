"""Which samples entered the model: one 64-bit digest per row of the tensors given to the outermost
``forward`` of a step, computed on their device without synchronisation.

A row is a slice along dimension 0 (the batch dimension of a batch-first model). Its digest is a
weighted sum, modulo 2**64, of the row's words (its bytes read as integers) with fixed random odd
weights: exact (the same bytes give the same digest on any device and at any batch size) and
sensitive to position. A row longer than ``SAMPLED`` words is summed over ``SAMPLED`` evenly spaced
words, and ``torch.hash_tensor`` (an xor of every word, where this torch has it) covers the rest.
The digests of the data tensors of one call that share its batch size are combined per row.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import torch

SAMPLED = 4096
MAX_TENSORS = 8
_hash_tensor = getattr(torch, "hash_tensor", None)
_WORDS = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}
_MIX = 0x9E3779B97F4A7C15 - (1 << 64)  # an odd 64-bit constant, as a signed int64
_cache: dict[tuple[torch.device, int], torch.Tensor] = {}


def _weights(device: torch.device, width: int) -> torch.Tensor:
    """``width`` fixed random odd int64 weights on ``device`` (cached)."""
    found = _cache.get((device, width))
    if found is None:
        generator = torch.Generator().manual_seed(0x5EED)
        drawn = torch.randint(
            -(2**63), 2**63 - 1, (SAMPLED,), dtype=torch.int64, generator=generator
        )
        found = _cache[(device, width)] = (drawn[:width] | 1).to(device)
    return found


def row_digests(tensor: torch.Tensor) -> torch.Tensor | None:
    """One int64 digest per row of ``tensor`` (dimension 0); None for a dtype it cannot read."""
    words_dtype = _WORDS.get(tensor.element_size())
    if words_dtype is None or tensor.is_quantized or tensor.is_sparse or tensor.is_complex():
        return None
    rows = tensor.detach() if tensor.requires_grad else tensor
    if rows.dim() != 2:
        rows = rows.reshape(rows.shape[0], -1)
    if rows.dtype == torch.bool:
        rows = rows.view(torch.uint8)
    words = rows.view(words_dtype) if rows.dtype != words_dtype else rows
    width = words.shape[1]
    step = -(-width // SAMPLED) if width > SAMPLED else 1
    picked = words[:, ::step] if step > 1 else words
    weights = _weights(words.device, picked.shape[1])
    digest = picked.to(torch.int64, copy=True).mul_(weights).sum(dim=1)  # wraps modulo 2**64
    if step > 1 and _hash_tensor is not None:
        digest = digest ^ _hash_tensor(words, dim=1).view(torch.int64)
    return digest


def _tensors(args: Iterable[Any]) -> Iterable[torch.Tensor]:
    """Tensors among ``args``, and one level inside lists, tuples and dicts."""
    for value in args:
        if isinstance(value, torch.Tensor):
            yield value
        elif isinstance(value, (list, tuple)):
            yield from (v for v in value if isinstance(v, torch.Tensor))
        elif isinstance(value, dict):
            yield from (v for v in value.values() if isinstance(v, torch.Tensor))


def call_digests(args: tuple[Any, ...], kwargs: dict[str, Any]) -> torch.Tensor | None:
    """Per-row digests of the data given to a forward call: the first data tensor with a
    dimension sets the batch size; every data tensor with that leading size (at most
    ``MAX_TENSORS``) contributes. Activations (tensors with a ``grad_fn``: one model's output fed
    to another) and dtypes it cannot read are left out. None when no data tensor is left."""
    combined: torch.Tensor | None = None
    size = None
    used = 0
    for tensor in _tensors((*args, *kwargs.values())):
        if tensor.dim() == 0 or tensor.grad_fn is not None:
            continue
        if combined is not None and (tensor.shape[0] != size or tensor.device != combined.device):
            continue
        digest = row_digests(tensor)
        if digest is None:
            continue
        size = tensor.shape[0]
        combined = digest if combined is None else combined * _MIX + digest
        used += 1
        if used == MAX_TENSORS:
            break
    return combined


def to_ints(groups: list[list[torch.Tensor] | None]) -> list[list[int] | None]:
    """Each group's digest tensors as one list of ints (None stays None), with one host copy per
    device."""
    by_device: dict[torch.device, list[torch.Tensor]] = {}
    for group in groups:
        for tensor in group or ():
            by_device.setdefault(tensor.device, []).append(tensor)
    values = {device: iter(torch.cat(tensors).tolist()) for device, tensors in by_device.items()}
    out: list[list[int] | None] = []
    for group in groups:
        if group is None:
            out.append(None)
            continue
        row: list[int] = []
        for tensor in group:
            source = values[tensor.device]
            row.extend(next(source) for _ in range(tensor.shape[0]))
        out.append(row)
    return out

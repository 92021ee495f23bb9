"""Order-sensitive hashes of tensors, computed on their device in chunks of bounded size.

``tensor_hash`` sums ``(bits(x[i]) + OFFSET) * (i + 1) * MULT`` over all elements in 64-bit
wrapping integer arithmetic, chunk by chunk. Integer addition is associative, so the result does
not depend on the chunking or the device's reduction order. ``torch.hash_tensor`` is not used:
it xor-reduces, so it cannot see two swapped elements.

Temporary memory is bounded whatever the tensor's size: two int64 buffers of ``CHUNK`` elements
(16 MiB), plus one copy of at most ``CHUNK`` elements of the tensor itself when it is not
contiguous: at most 24 MiB at a time (``TEMP_BYTES``).
"""

from __future__ import annotations

from collections.abc import Iterator

import torch

CHUNK = 1 << 20  # elements hashed at a time
TEMP_BYTES = 3 * 8 * CHUNK  # the bound stated above
_INT_VIEW = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}
_MULT = 0x9E3779B97F4A7C1  # odd, below 2**63
_OFFSET = 0x5BD1E995


def hashable(t: torch.Tensor) -> bool:
    """Whether ``tensor_hash`` can read ``t`` (dense and materialized)."""
    local = getattr(t, "_local_tensor", t)  # a DTensor's shard on this rank
    return bool(local.layout == torch.strided and not local.is_meta and not local.is_quantized)


def _pieces(x: torch.Tensor, start: int) -> Iterator[tuple[int, torch.Tensor]]:
    """``(position of the first element, 1-D piece)`` in row-major order, each piece at most
    ``CHUNK`` elements; only the pieces of a non-contiguous tensor are copies."""
    if x.is_contiguous():
        flat = x.view(-1)
        for i in range(0, flat.numel(), CHUNK):
            yield start + i, flat[i : i + CHUNK]
        return
    if x.dim() <= 1:
        for i in range(0, x.numel(), CHUNK):
            yield start + i, x[i : i + CHUNK].contiguous()
        return
    row = x[0].numel()
    per = CHUNK // row if row else x.shape[0]
    if per == 0:
        for r in range(x.shape[0]):
            yield from _pieces(x[r], start + r * row)
        return
    for r in range(0, x.shape[0], per):
        yield start + r * row, x[r : r + per].reshape(-1)


def tensor_hash(t: torch.Tensor) -> torch.Tensor:
    """A 0-d int64 tensor on ``t``'s device; never writes to ``t``."""
    with torch.no_grad():
        x = getattr(t, "_local_tensor", t).detach()
        if x.is_complex():
            x = torch.view_as_real(x)
        if x.dtype == torch.bool:
            x = x.view(torch.uint8)
        as_int = _INT_VIEW[x.element_size()]
        total = torch.zeros((), dtype=torch.int64, device=x.device)
        for first, piece in _pieces(x, 0):
            bits = piece.view(as_int).to(torch.int64, copy=True)
            bits.add_(_OFFSET)
            weights = torch.arange(
                first + 1, first + bits.numel() + 1, device=bits.device, dtype=torch.int64
            )
            weights.mul_(_MULT)
            bits.mul_(weights)
            total.add_(bits.sum())
            del bits, weights
        return total.add_(x.numel())

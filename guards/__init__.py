"""guards: a runtime guard for PyTorch distributed training.

``torchrun --nproc_per_node=N -m guards train.py ARGS`` or ``import guards; guards.install()``.
Every collective is recorded locally; a monitor thread per rank compares summaries through the
c10d store and, when ranks disagree, hang, fail or drift apart, prints one ``[guards]`` report on
every rank and stops them all.
"""

from __future__ import annotations

__all__ = ["install"]


def install() -> None:
    """Start guarding this process (idempotent; a no-op with ``GUARDS_DISABLE=1``)."""
    from .runtime import RUNTIME

    RUNTIME.install()

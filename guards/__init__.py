"""guards: a runtime guard for PyTorch distributed training.

Three ways to turn it on, all idempotent and all off with ``GUARDS_DISABLE=1``:

- ``torchrun --nproc_per_node=N -m guards train.py ARGS``
- ``import guards`` at the top of a script started by torchrun (installs itself when torchrun's
  environment is present; does nothing otherwise)
- ``import guards; guards.install()`` anywhere, e.g. inside ``torch.multiprocessing.spawn``
  workers

Every collective is recorded locally; a monitor thread per rank compares summaries through the
c10d store and, when ranks disagree, hang, fail or drift apart, prints one ``[guards]`` report on
every rank and stops them all.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

__all__ = ["install", "started_by_torchrun"]


def started_by_torchrun(env: Mapping[str, str]) -> bool:
    """Whether this process is a worker that torchrun (or an elastic agent) started."""
    if env.get("TORCHELASTIC_RUN_ID"):
        return True
    return all(env.get(k) for k in ("LOCAL_RANK", "WORLD_SIZE", "MASTER_ADDR"))


def install() -> None:
    """Start guarding this process (idempotent; a no-op with ``GUARDS_DISABLE=1``)."""
    from .agent.runtime import RUNTIME

    RUNTIME.install()


if started_by_torchrun(os.environ):
    from .agent.config import load as _load

    if not _load().disabled:
        install()

"""Let torchrun's summary name the rank that failed, not a rank the guard stopped.

torchrun's agent polls its workers every ``--monitor-interval`` (0.1 s). At the first poll that
finds a worker ended with a non-zero status it records that failure, SIGTERMs the others and
records them too. Its "Root Cause (first observed failure)" is the failure with the smallest
timestamp: the one the worker wrote in its ``TORCHELASTIC_ERROR_FILE`` (what ``@record`` writes),
else the time of the poll, in whole seconds; a tie goes to the failure recorded first (the first
poll's, in local-rank order). A rank stopped by the guard that exits before the failing rank is
therefore named as the root cause.

So when a verdict names the rank that failed, the others leave after it: they wait for its
process to end (on this host), then for torchrun's SIGTERM, and only then leave on their own.
The failing rank writes its error file (unless the script's ``@record`` did), so that even a
survivor recorded in the same poll has a later timestamp.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from typing import Any

from ..protocol.messages import Exited, Failed, Vanished, Verdict

TERM_WAIT = 3.0  # seconds a survivor waits for torchrun's SIGTERM once the failing rank is gone


def culprit(verdict: Verdict) -> int | None:
    """The rank whose own failure or exit the verdict reports, if any."""
    if isinstance(verdict, (Failed, Exited, Vanished)):
        return verdict.rank
    return None


def under_torchrun() -> bool:
    """Whether torchrun's agent watches this process (and SIGTERMs it after a failure)."""
    return "TORCHELASTIC_RUN_ID" in os.environ


def write_error_file(message: str, callstack: str, when: float) -> None:
    """Write torchrun's error file for this rank, as ``@record`` does, unless one exists."""
    path = os.environ.get("TORCHELASTIC_ERROR_FILE")
    if not path or os.path.exists(path):
        return
    data = {
        "message": {
            "message": message,
            "extraInfo": {"py_callstack": callstack, "timestamp": str(int(when))},
        }
    }
    with contextlib.suppress(OSError), open(path, "x") as f:
        json.dump(data, f)


def wait_until_gone(alive: Any, pid: int, deadline: float) -> bool:
    """Wait until process ``pid`` has ended (``alive(pid)`` is false) or ``deadline``."""
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.02)
    return not alive(pid)

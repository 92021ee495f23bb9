"""End the process tree of this rank (DataLoader workers included) before it leaves."""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path


def _parents() -> dict[int, int]:
    """pid to parent pid for every process visible in /proc (empty where there is no /proc)."""
    found: dict[int, int] = {}
    with contextlib.suppress(OSError):
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            found[int(entry.name)] = int(stat.rsplit(")", 1)[-1].split()[1])
    return found


def descendants(pid: int) -> list[int]:
    """Every live descendant of ``pid``, parents before their children."""
    children: dict[int, list[int]] = {}
    for child, parent in _parents().items():
        children.setdefault(parent, []).append(child)
    out: list[int] = []
    todo = list(children.get(pid, []))
    while todo:
        p = todo.pop(0)
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def kill_children() -> None:
    """SIGKILL every descendant of this process: nothing of a stopped rank keeps running."""
    for pid in descendants(os.getpid()):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)

"""Where the main thread is, seen from the monitor thread: its user stack, how long it has gone
without a recorded collective, and whether it sits inside a communication call the guard does
not record (a point-to-point ``recv``, DDP's buffer broadcast in forward)."""

from __future__ import annotations

import linecache
import os
import sys
import threading
import time
import types

import torch

from ..protocol.messages import Place
from ..record.callsite import is_internal, site_of

IDLE = 1.0  # seconds without a recorded collective before the location is published
_STDLIB = os.path.dirname(os.__file__) + os.sep
_TORCH = os.path.dirname(torch.__file__) + os.sep
# Python code that blocks in communication the guard does not record
_COMMUNICATION = (
    _TORCH + "distributed" + os.sep,
    _TORCH + os.path.join("nn", "parallel", "distributed.py"),
)


def user_code(code: types.CodeType) -> bool:
    name = code.co_filename
    return not (is_internal(code) or name.startswith(_STDLIB) or "runpy" in name)


def main_frame() -> types.FrameType | None:
    """The innermost frame of the main thread."""
    return sys._current_frames().get(threading.main_thread().ident or -1)


def main_stack(limit: int = 12) -> list[str]:
    """The main thread's Python stack in user code, innermost last."""
    frame = main_frame()
    lines: list[str] = []
    while frame is not None and len(lines) < limit:
        lineno = frame.f_lineno  # None while another thread's frame is between lines
        if user_code(frame.f_code) and lineno is not None:
            line = linecache.getline(frame.f_code.co_filename, lineno).strip()
            lines.append(f"{site_of(frame)} in {frame.f_code.co_name}: {line}")
        frame = frame.f_back
    return lines[::-1]


def communication_call(frame: types.FrameType | None) -> str:
    """The name of the torch communication function ``frame`` executes, or ``""``."""
    if frame is None or not frame.f_code.co_filename.startswith(_COMMUNICATION):
        return ""
    return frame.f_code.co_name


class Whereabouts:
    """Progress of the recorded collectives, and the main thread's location once it stalls."""

    def __init__(self) -> None:
        self._count = -1
        self._since = time.monotonic()
        self._call: tuple[int, int] | None = None
        self._call_since = self._since

    def update(self, count: int, waiting: bool) -> Place | None:
        """``None`` while the rank issues or waits in recorded collectives; else where the main
        thread is, and how long it has sat there."""
        now = time.monotonic()
        if waiting or count != self._count:
            self._count, self._since, self._call = count, now, None
            return None
        idle = now - self._since
        if idle < IDLE:
            return None
        frame = main_frame()
        call = communication_call(frame)
        if not call or frame is None:
            self._call = None
            inside = 0.0
        else:
            key = (id(frame), frame.f_lasti)
            if key != self._call:
                self._call, self._call_since = key, now
            inside = now - self._call_since
        return Place(round(idle, 1), round(inside, 1), call, main_stack())

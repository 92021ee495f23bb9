"""Cheap lookup of the user's call site: the innermost frame outside torch and guards."""

from __future__ import annotations

import os
import sys
import types

import torch

_INTERNAL_DIRS = (
    os.path.dirname(torch.__file__) + os.sep,
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep,  # guards/
)
# Keyed by id(): hashing a code object hashes its contents. Each value keeps its code object
# alive, so an id is never reused for another code object while cached.
_internal: dict[int, tuple[types.CodeType, bool]] = {}
_sites: dict[tuple[int, int], tuple[types.CodeType, str]] = {}


def is_internal(code: types.CodeType) -> bool:
    """Whether ``code`` belongs to torch, guards or a frozen module."""
    cached = _internal.get(id(code))
    if cached is not None and cached[0] is code:
        return cached[1]
    name = code.co_filename
    flag = name.startswith(_INTERNAL_DIRS) or name.startswith("<frozen")
    _internal[id(code)] = (code, flag)
    return flag


def user_frame(depth: int = 1) -> types.FrameType | None:
    """The innermost frame, from ``depth`` callers up, whose code is not torch's or ours."""
    try:
        frame: types.FrameType | None = sys._getframe(depth + 1)
    except ValueError:
        return None
    while frame is not None and is_internal(frame.f_code):
        frame = frame.f_back
    return frame


def site_of(frame: types.FrameType | None) -> str:
    """``file.py:LINE`` for a frame, cached per code object and instruction (computing a line
    number from an instruction offset costs more than the rest of the lookup)."""
    if frame is None:
        return "<unknown>"
    code = frame.f_code
    key = (id(code), frame.f_lasti)
    cached = _sites.get(key)
    if cached is not None and cached[0] is code:
        return cached[1]
    site = f"{os.path.basename(code.co_filename)}:{frame.f_lineno}"
    _sites[key] = (code, site)
    return site


def call_site(depth: int = 1) -> str:
    """The user's call site, ``depth`` frames above the caller of this function."""
    return site_of(user_frame(depth + 1))


def traceback_site(tb: types.TracebackType | None) -> str:
    """The innermost user frame of a traceback, as ``file.py:LINE``."""
    site = "<unknown>"
    while tb is not None:
        if not is_internal(tb.tb_frame.f_code):
            site = f"{os.path.basename(tb.tb_frame.f_code.co_filename)}:{tb.tb_lineno}"
        tb = tb.tb_next
    return site

"""Fail open: an error in guard code on a user thread turns that guard code off.

Every hook on a user thread (collective wrappers, the DDP comm hook and forward, the optimizer-step
hook, parameter hashing) runs its own code inside ``try``; on an exception it calls ``fail`` and
then does exactly what the program would have done without the guard. The user's own calls run
once, and their exceptions propagate untouched. ``fail_open`` does the same for the methods of
``compare``'s recorder, which turns recording off instead.
"""

from __future__ import annotations

import functools
import os
import traceback
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

T = TypeVar("T")


class Switch:
    """Whether the hooks of this process still record (read on the hot path)."""

    __slots__ = ("on",)

    def __init__(self) -> None:
        self.on = True


SWITCH = Switch()

# What turns this process's guard off, given the reason: the runtime registers itself here
# when it is created, so that this module, which every hook imports, imports none of them.
_TURN_OFF: list[Callable[[str], None]] = []


def on_fail(turn_off: Callable[[str], None]) -> None:
    """Call `turn_off(reason)` when guard code fails on a user thread."""
    _TURN_OFF.append(turn_off)


def _where(exc: BaseException) -> str:
    """``guards/record/ledger.py:57``: the innermost guard frame in the traceback."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # guards/
    found = ""
    for frame in traceback.extract_tb(exc.__traceback__):
        if os.path.abspath(frame.filename).startswith(here + os.sep):
            found = f"guards/{os.path.relpath(frame.filename, here)}:{frame.lineno}"
    return found


def fail(component: str, exc: BaseException) -> None:
    """Turn the guard off in this process after an error of its own in ``component``."""
    if not SWITCH.on:
        return
    SWITCH.on = False
    where = _where(exc)
    reason = f"internal error in the {component}: {type(exc).__name__}: {exc}"
    if where:
        reason += f" ({where})"
    try:
        for turn_off in _TURN_OFF:
            turn_off(reason + "; this process continues without the guard")
    except Exception:  # the guard's own reporting failed too: stay silent, stay out of the way
        pass


class Switchable(Protocol):
    active: bool

    def fail(self, exc: BaseException, where: str) -> None: ...


def fail_open(method: Callable[..., T]) -> Callable[..., T | None]:
    """Run a method of the recorder (or of a helper holding ``.recorder``) only while recording
    is on; an exception turns recording off (one line on stderr) and the method returns None."""

    @functools.wraps(method)
    def wrapper(self: Any, *args: Any) -> T | None:
        owner: Switchable = getattr(self, "recorder", self)
        if not owner.active:
            return None
        try:
            return method(self, *args)
        except Exception as exc:
            owner.fail(exc, method.__name__)
            return None

    return wrapper

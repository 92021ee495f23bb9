"""Fail-open hook methods: an exception in recording turns recording off, never the user's call."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

T = TypeVar("T")


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

"""Wrappers around the public ``torch.distributed`` collectives that record each call."""

from __future__ import annotations

import functools
import sys
import threading
from collections.abc import Callable
from typing import Any

import torch.distributed as dist
from torch.distributed import distributed_c10d

from ..record.callsite import is_internal, site_of, user_frame
from ..record.fingerprint import OP_CODES, SPECS, argument, extractor
from ..record.ledger import GroupLedger, Ledger
from . import failopen
from .handmade import REDUCED

_local = threading.local()
_originals: dict[str, Callable[..., Any]] = {}


class quiet:  # used as ``with quiet():``
    """Collectives issued inside are not recorded (they are part of one already recorded).

    A plain class rather than a generator context manager: the DDP hook enters it per bucket.
    """

    __slots__ = ("_before",)

    def __enter__(self) -> None:
        self._before = getattr(_local, "busy", False)
        _local.busy = True

    def __exit__(self, *_: object) -> None:
        _local.busy = self._before


class TrackedWork:
    """The work handle of an ``async_op=True`` collective; ``wait`` counts as blocking."""

    def __init__(self, work: Any, ledger: GroupLedger, seq: int) -> None:
        self._work = work
        self._ledger = ledger
        self._seq = seq

    def wait(self, *args: Any, **kwargs: Any) -> Any:
        try:
            self._ledger.wait_begin(self._seq)
        except Exception as exc:
            failopen.fail(COMPONENT, exc)
        try:
            return self._work.wait(*args, **kwargs)
        finally:
            try:
                self._ledger.wait_end(self._seq)
            except Exception as exc:
                failopen.fail(COMPONENT, exc)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._work, name)


COMPONENT = "collective wrapper"
NOVEL_LIMIT = 64
_novel: set[int] = set()


def _wrap(
    name: str,
    fn: Callable[..., Any],
    ledger: Ledger,
    on_error: Callable[[BaseException], None],
    on_novel: Callable[[], None],
) -> Callable[..., Any]:
    op_code = OP_CODES[name]
    meta_of = extractor(name, fn)
    group_of = argument(fn, "group")
    async_of = argument(fn, "async_op")
    # all_reduce of a gradient makes its parameter a replica (``handmade``)
    reduced_of = argument(fn, "tensor") if name == "all_reduce" else None
    switch = failopen.SWITCH

    @functools.wraps(fn)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        if not switch.on or getattr(_local, "busy", False):
            return fn(*args, **kwargs)
        seq = -1
        try:  # the guard's own work: any error turns it off, never reaches the caller
            group = ledger.group(group_of(args, kwargs))
            frame = user_frame(1)
            # no user frame: a callback on a communication thread (comm hooks chaining
            # futures) whose order between ranks is not deterministic
            if group is not None and frame is not None:
                meta = meta_of(args, kwargs, group.ranks)
                fp = group.fingerprint(op_code, meta)
                seq = group.append(fp, name, meta, site_of(frame))
                if fp not in _novel and len(_novel) < NOVEL_LIMIT:
                    # a call shape never seen before is published before it runs: a backend
                    # that aborts the process on a mismatch (gloo on sizes) cannot hide it
                    _novel.add(fp)
                    on_novel()
                if reduced_of is not None and REDUCED.on:
                    REDUCED.note(reduced_of(args, kwargs), group.name, group.ranks)
                is_async = async_of(args, kwargs)
                if not is_async:
                    group.blocked = seq
        except Exception as exc:
            failopen.fail(COMPONENT, exc)
            seq = -1
        if seq < 0 or group is None:
            return fn(*args, **kwargs)
        _local.busy = True
        try:
            result = fn(*args, **kwargs)
        except Exception as exc:
            _local.busy = False
            try:
                on_error(exc)  # still marked as blocked: that is where this rank is
            except Exception as own:
                failopen.fail(COMPONENT, own)
            raise
        finally:
            _local.busy = False
            if not is_async and group.blocked == seq:
                group.blocked = -1
        if is_async and result is not None:
            try:
                if not is_internal(sys._getframe(1).f_code):
                    # only user code gets the tracking handle: torch hands raw ones to C++
                    return TrackedWork(result, group, seq)
            except Exception as exc:
                failopen.fail(COMPONENT, exc)
        return result

    return guarded


def patch(
    ledger: Ledger, on_error: Callable[[BaseException], None], on_novel: Callable[[], None]
) -> None:
    """Replace every public collective in ``torch.distributed`` by a recording wrapper."""
    for name in SPECS:
        fn = getattr(dist, name, None)
        if fn is None or name in _originals:
            continue
        _originals[name] = fn
        wrapped = _wrap(name, fn, ledger, on_error, on_novel)
        setattr(dist, name, wrapped)
        if getattr(distributed_c10d, name, None) is fn:
            setattr(distributed_c10d, name, wrapped)

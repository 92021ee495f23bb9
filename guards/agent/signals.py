"""SIGTERM under torchrun: the guard gets at most a second to finish a report, then the process
ends by SIGTERM as it would without the guard, even while its main thread is blocked in C++.

Python runs signal handlers on the main thread only, between bytecodes: a main thread inside a
collective would never run one. The signal's number also reaches a wakeup socket, read by a
watcher thread, so the handling does not depend on the main thread.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import socket
import threading
import time
import types
from collections.abc import Callable

GRACE = 0.9  # seconds the guard may take between SIGTERM and termination


def _terminate() -> None:
    """End this process by SIGTERM with the default action, from any thread."""
    with contextlib.suppress(Exception):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.signal.argtypes = [ctypes.c_int, ctypes.c_void_p]
        libc.signal.restype = ctypes.c_void_p
        libc.signal(signal.SIGTERM, None)  # SIG_DFL is 0
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(1.0)
    os._exit(128 + signal.SIGTERM)


def _plain_child() -> None:
    """A forked child (a DataLoader worker) gets SIGTERM's default back."""
    with contextlib.suppress(Exception):
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


class TermHandler:
    """Runs ``last_words(deadline)`` once on SIGTERM, then terminates the process."""

    def __init__(self, last_words: Callable[[float], None]) -> None:
        self._last_words = last_words
        self._lock = threading.Lock()
        self._fired = False
        self._reader: socket.socket | None = None
        self._writer: socket.socket | None = None

    def install(self) -> None:
        """Install on the main thread; without a wakeup socket the handler alone is used."""
        signal.signal(signal.SIGTERM, self._handler)
        reader, writer = socket.socketpair()
        writer.setblocking(False)
        try:
            previous = signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
        except (ValueError, OSError):
            reader.close()
            writer.close()
            return
        if previous != -1:  # somebody else's (an event loop): leave it in place
            signal.set_wakeup_fd(previous)
            reader.close()
            writer.close()
            return
        self._reader, self._writer = reader, writer
        # a forked child never holds the wakeup socket: a signal it gets before its at-fork
        # hooks have run (a child not scheduled at once) must not reach the parent's watcher
        os.register_at_fork(
            before=self._detach, after_in_parent=self._attach, after_in_child=_plain_child
        )
        threading.Thread(target=self._watch, name="guards-sigterm", daemon=True).start()

    def _detach(self) -> None:
        with contextlib.suppress(ValueError):  # a fork from another thread keeps the socket
            signal.set_wakeup_fd(-1)

    def _attach(self) -> None:
        writer = self._writer
        if writer is not None:
            with contextlib.suppress(ValueError):
                signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)

    def _handler(self, signum: int, frame: types.FrameType | None) -> None:
        self.fire()

    def _watch(self) -> None:
        reader = self._reader
        assert reader is not None
        while True:
            try:
                data = reader.recv(64)
            except OSError:
                return
            if not data:
                return
            if signal.SIGTERM in data:
                self.fire()

    def fire(self) -> None:
        with self._lock:
            if self._fired:
                return
            self._fired = True
        deadline = time.monotonic() + GRACE
        with contextlib.suppress(Exception):
            self._last_words(deadline)
        _terminate()

"""Process-wide state of the guard and its install/finish/failure paths."""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import signal
import sys
import threading
import time
import traceback
import types
from typing import Any, NoReturn

import torch
import torch.distributed as dist
from torch.distributed import distributed_c10d

from ..hooks import collectives, ddp, failopen
from ..hooks.params import ParamChecker
from ..protocol import exchange
from ..protocol.messages import Exited, Failed, State
from ..record.callsite import is_internal, site_of, traceback_site, user_frame
from ..record.ledger import Ledger
from . import config, report, root_cause
from .cleanup import kill_children
from .monitor import Monitor
from .signals import TermHandler

CONNECT_TIMEOUT = 5.0
EXPLAIN_WAIT = 2.0
# seconds os._exit may wait for this rank's last summary, its monitor's connection included
FINAL_PUBLISH = 2.0
# seconds a finished rank waits at most for its peers' end: well past the monitor's own
# decision (a silent peer 15 s, an idle one 5 s), so that the guard never holds a job that
# ended (a backstop: a peer that left by os._exit before its monitor connected used to stay
# undecided; it now publishes its end, or counts as silent)
FINISH_LIMIT = 45.0
_real_exit = os._exit
_DIST_WORDS = ("gloo", "nccl", "connection", "timed out", "timeout", "peer", "c10d")


def memory_lines(exc: BaseException) -> list[str]:
    """Allocator statistics for a CUDA out-of-memory error, when CUDA is present."""
    if not isinstance(exc, torch.cuda.OutOfMemoryError) or not torch.cuda.is_available():
        return []
    try:
        dev = torch.cuda.current_device()
        gib = 1024**3
        total = torch.cuda.get_device_properties(dev).total_memory
        return [
            f"cuda:{dev} allocated {torch.cuda.memory_allocated(dev) / gib:.2f} GiB, "
            f"reserved {torch.cuda.memory_reserved(dev) / gib:.2f} GiB, "
            f"peak {torch.cuda.max_memory_allocated(dev) / gib:.2f} GiB, "
            f"total {total / gib:.2f} GiB"
        ]
    except Exception:
        return []


def _looks_distributed(exc: BaseException) -> bool:
    if isinstance(exc, getattr(dist, "DistError", ())):
        return True
    text = f"{type(exc).__name__} {exc}".lower()
    return any(word in text for word in _DIST_WORDS)


def user_traceback(tb: types.TracebackType | None) -> types.TracebackType | None:
    """Drop the leading frames of guards, runpy and torch so a traceback starts in user code."""
    while (
        tb is not None
        and tb.tb_next is not None
        and (is_internal(tb.tb_frame.f_code) or "runpy" in tb.tb_frame.f_code.co_filename)
    ):
        tb = tb.tb_next
    return tb


class Runtime:
    """The guard of one process."""

    def __init__(self) -> None:
        self.config = config.Config()
        self.ledger = Ledger()
        self.params = ParamChecker(0)
        self.monitor: Monitor | None = None
        self.rank = -1
        self.world_size = 0
        self.state = State.RUN
        self.installed = False
        self.terminating = False
        self._pid = os.getpid()
        self._pg_timeout: float | None = None
        self._lock = threading.Lock()
        self._warned = False
        self._finished = False
        self._explained: set[int] = set()
        self._previous_hook = sys.excepthook

    # --- install ------------------------------------------------------------------------------
    def install(self) -> None:
        with self._lock:
            if self.installed:
                return
            self.installed = True
        self._pid = os.getpid()
        self.config = config.load()
        if self.config.disabled:
            return
        self.params = ParamChecker(self.config.param_check_every)
        collectives.patch(self.ledger, self.explain, self.publish_now)
        ddp.patch(self.ledger)
        self.params.install()
        self._previous_hook = sys.excepthook
        sys.excepthook = self._excepthook
        atexit.register(self.finish)
        os._exit = self._os_exit
        self._patch_init()
        env = os.environ
        if dist.is_initialized():
            self._start_from_group()
        elif (
            "RANK" in env
            and "WORLD_SIZE" in env
            and (self.config.store or ("MASTER_ADDR" in env and "MASTER_PORT" in env))
        ):
            self._start(
                int(env["RANK"]),
                int(env["WORLD_SIZE"]),
                functools.partial(exchange.connect, self.config.store, CONNECT_TIMEOUT),
            )
        if (
            "TORCHELASTIC_RUN_ID" in env
            and threading.current_thread() is threading.main_thread()
            and signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
        ):
            # torchrun stops the survivors with SIGTERM: a report in progress gets < 1 s
            TermHandler(self._last_words).install()

    def _patch_init(self) -> None:
        original = dist.init_process_group

        @functools.wraps(original)
        def init_process_group(*args: Any, **kwargs: Any) -> Any:
            result = original(*args, **kwargs)
            timeout = kwargs.get("timeout", args[2] if len(args) > 2 else None)
            with contextlib.suppress(Exception):
                if timeout is None:
                    timeout = distributed_c10d._get_default_timeout(dist.get_backend())
                self._pg_timeout = float(timeout.total_seconds())
            if self.monitor is None and self.state is not State.OFF:
                self._start_from_group()
            return result

        dist.init_process_group = init_process_group
        if distributed_c10d.init_process_group is original:
            distributed_c10d.init_process_group = init_process_group

    def _start_from_group(self) -> None:
        if self.config.store:
            connect = functools.partial(exchange.connect, self.config.store, CONNECT_TIMEOUT)
        else:
            store = distributed_c10d._get_default_store()
            connect = functools.partial(lambda s: s, store)
        self._start(dist.get_rank(), dist.get_world_size(), connect)

    def _start(self, rank: int, world_size: int, connect: Any) -> None:
        self.rank, self.world_size = rank, world_size
        self.monitor = Monitor(self, connect)
        self.monitor.start()

    def hang_timeout(self) -> float:
        """GUARDS_HANG_TIMEOUT, else the process group's own timeout (when the job could not
        succeed anyway)."""
        if self.config.hang_timeout is not None:
            return self.config.hang_timeout
        if self._pg_timeout is not None:
            return self._pg_timeout
        return float(distributed_c10d.default_pg_timeout.total_seconds())

    def _active(self) -> Monitor | None:
        mon = self.monitor
        if mon is None or self.state is State.OFF or not mon.connected.is_set() or mon.ex is None:
            return None
        return mon

    def publish_now(self) -> None:
        """Publish this rank's summary from the calling thread (rare: new call shapes only)."""
        mon = self._active()
        if mon is not None:
            with contextlib.suppress(Exception):
                mon.publish()

    # --- the guard's own trouble --------------------------------------------------------------
    def disable(self, reason: str) -> None:
        """Print one ``[guards] disabled: <reason>`` line, mark this rank off, and get out of
        the way: the user's code continues as without the guard. Safe from any thread."""
        with self._lock:
            if self._warned:
                return
            self._warned = True
            self.state = State.OFF
        with contextlib.suppress(Exception):
            report.stream().write(f"{report.PREFIX} disabled: {reason}\n")
            report.stream().flush()
        mon = self.monitor
        if mon is not None and mon.ex is not None:
            with contextlib.suppress(Exception):
                mon.publish()
                if not mon.acked:
                    mon.ex.turn_off()  # peers waiting for acknowledgements stop counting it

    def disable_after_failure(self, reason: str) -> None:
        """`disable`, after an error of guard code on a user thread (`failopen.fail`)."""
        self.disable(reason)
        monitor = self.monitor
        if monitor is not None:
            # this rank is published as off: its monitor stops, and the process waits for it
            # at exit, so no store call of the monitor is cut by the interpreter's shutdown
            # (a C++ thread torn down mid-call aborts the process)
            monitor.ok.set()
            monitor.poke()
            atexit.register(monitor.join, EXIT_WAIT)

    def abort_and_exit(self, status: int) -> None:
        """Abort an NCCL communicator where possible, then leave at once."""
        self.release()
        _real_exit(status)

    def release(self) -> None:
        """Abort an NCCL communicator where possible, flush, and end this rank's children."""
        with contextlib.suppress(Exception):
            if dist.is_initialized() and "nccl" in str(dist.get_backend()).lower():
                abort = getattr(distributed_c10d, "_abort_process_group", None)
                if abort is not None:
                    t = threading.Thread(target=abort, daemon=True)
                    t.start()
                    t.join(1.0)
        with contextlib.suppress(Exception):
            report.stream().flush()
        kill_children()

    # --- failures of the user's program -------------------------------------------------------
    def explain(self, exc: BaseException) -> None:
        """A collective failed: give the monitor a moment to find (and report) the cause."""
        mon = self._active()
        if mon is None or id(exc) in self._explained:
            return
        self._explained.add(id(exc))
        mon.poke()
        deadline = time.monotonic() + EXPLAIN_WAIT
        while time.monotonic() < deadline and not mon.stopped.is_set():
            if mon.reporting.is_set():
                time.sleep(DETAIL_AND_ACKS)
                return
            time.sleep(0.02)

    def _excepthook(
        self, etype: type[BaseException], value: BaseException, tb: types.TracebackType | None
    ) -> None:
        if _looks_distributed(value):
            self.explain(value)
        short = user_traceback(tb)
        self._previous_hook(etype, value.with_traceback(short), short)
        self.on_uncaught(value, tb)

    def _connected(self) -> Monitor | None:
        """The monitor once connected to the store. A script that ends early waits for the
        connection (on a loaded machine it may take seconds): leaving while the monitor is
        inside the store's C++ connect would abort the process, and a failure must be told."""
        mon = self.monitor
        if mon is None:
            return None
        deadline = time.monotonic() + 6 * CONNECT_TIMEOUT
        while time.monotonic() < deadline and not (mon.connected.is_set() or mon.stopped.is_set()):
            time.sleep(0.05)
        return self._active()

    def on_uncaught(self, exc: BaseException, tb: types.TracebackType | None) -> None:
        """Tell every rank that this one failed, and give them time to report it."""
        when = time.time()
        mon = self._connected()
        if mon is None or mon.ex is None:
            return
        self.state = State.FAILED
        message = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else ""
        site = traceback_site(tb)
        record = Failed(self.rank, type(exc).__name__, message, site, memory_lines(exc))
        stack = "".join(traceback.format_exception(type(exc), exc, user_traceback(tb)))
        self._own_verdict(mon, record, 1, (f"{type(exc).__name__}: {exc}", stack, when))

    def _own_verdict(
        self, mon: Monitor, record: Failed | Exited, status: int, error: tuple[str, str, float]
    ) -> None:
        """Propose this rank's own failure; when it holds, report it and write torchrun's error
        file (``error``: message, call stack, time) so that torchrun names this rank."""
        assert mon.ex is not None
        try:
            held = mon.ex.propose(record)
        except Exception:
            return
        if type(held) is type(record) and getattr(held, "rank", None) == self.rank:
            lines = report.render(held, {}, self.rank, None, status)
            root_cause.write_error_file(error[0], error[1] + "\n".join(lines), error[2])
            mon.finish_report(held, lines, status)
            mon.wait_acks()
            mon.halt()  # no store call of the monitor may be cut by the interpreter's exit
        else:
            mon.poke()  # another verdict came first: the monitor reports it and exits
            time.sleep(DETAIL_AND_ACKS)

    def finish(self, status: int | None = 0) -> None:
        """The script ended: wait until every rank agrees it ended cleanly, or report."""
        if self._finished:
            return
        self._finished = True
        mon = self.monitor
        if mon is None or self.state in (State.OFF, State.FAILED):
            return
        mon = self._connected()
        if mon is None:
            return
        if status:
            when = time.time()
            record = Exited(self.rank, status, traceback_site(sys.exc_info()[2]))
            self._own_verdict(mon, record, status, (f"SystemExit: {status}", "", when))
            return
        self.params.finish()
        self.state = State.FIN
        mon.poke()
        deadline = time.monotonic() + FINISH_LIMIT
        while not mon.ok.is_set() and not mon.stopped.is_set():
            if time.monotonic() > deadline and not mon.reporting.is_set():
                # the monitor decides within SILENT + LEAVE_AFTER seconds; past the limit this
                # rank leaves as it would without the guard (the final check is lost, no more)
                mon.halt()
                return
            mon.ok.wait(0.1)
        if mon.reporting.is_set():
            time.sleep(DETAIL_AND_ACKS)  # the monitor reports and ends the process
        if mon.ok.is_set() and not mon.leaving:
            mon.wait_acks()

    def _os_exit(self, status: int) -> NoReturn:
        """``os._exit`` of this process: tell the peers how it ends first (bounded), then leave."""
        mon = self.monitor
        if (
            mon is not None
            and self.state is not State.OFF
            and os.getpid() == self._pid
            and not self._finished
        ):
            self._finished = True
            site = site_of(user_frame(0))
            if status == 0:
                self.state = State.FIN
            t = threading.Thread(target=self._last_news, args=(mon, status, site), daemon=True)
            t.start()
            t.join(FINAL_PUBLISH)
        _real_exit(status)

    @staticmethod
    def _last_news(mon: Monitor, status: int, site: str) -> None:
        """Publish this rank's end, once its monitor is connected: a rank that left before its
        monitor first published is, to its peers, neither finished nor gone (it never
        registered its process), and a finished peer would wait for it."""
        deadline = time.monotonic() + FINAL_PUBLISH
        while not mon.connected.wait(0.05):
            if mon.stopped.is_set() or time.monotonic() > deadline:
                return  # the store is out of reach
        if mon.ex is None:
            return
        if status == 0:
            mon.publish()
        else:
            mon.ex.propose(Exited(mon.rt.rank, status, site))

    def _last_words(self, deadline: float) -> None:
        """SIGTERM: let the monitor judge once more and print a report it finds, until
        ``deadline``."""
        self.terminating = True
        mon = self._active()
        if mon is None:
            return
        ticks = mon.ticks
        mon.poke()
        while time.monotonic() < deadline and not mon.printed.is_set():
            if mon.ticks > ticks + 1 and not mon.reporting.is_set():
                return  # judged twice since the signal: nothing to report
            time.sleep(0.02)


DETAIL_AND_ACKS = 10.0
EXIT_WAIT = 2.0  # seconds the process waits at exit for a monitor stopped by a failure
RUNTIME = Runtime()
failopen.on_fail(RUNTIME.disable_after_failure)

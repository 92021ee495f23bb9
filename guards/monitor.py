"""The per-rank monitor thread: publish a summary, judge, report, and stop the process."""

from __future__ import annotations

import contextlib
import json
import linecache
import os
import socket
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch.distributed as dist

from . import config, exchange, report, verdict
from .callsite import is_internal, site_of
from .fingerprint import describe
from .ledger import GroupLedger

if TYPE_CHECKING:
    from .runtime import Runtime

WINDOW = 8
_STDLIB = os.path.dirname(os.__file__) + os.sep
ACK_WAIT = 2.0
DETAIL_WAIT = 3.0


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except OSError:
        return True


def _user_code(code: Any) -> bool:
    name = code.co_filename
    return not (is_internal(code) or name.startswith(_STDLIB) or "runpy" in name)


def main_stack(limit: int = 12) -> list[str]:
    """The main thread's Python stack in user code, innermost last."""
    frame = sys._current_frames().get(threading.main_thread().ident or -1)
    lines = []
    while frame is not None and len(lines) < limit:
        if _user_code(frame.f_code):
            line = linecache.getline(frame.f_code.co_filename, frame.f_lineno).strip()
            lines.append(f"{site_of(frame)} in {frame.f_code.co_name}: {line}")
        frame = frame.f_back
    return lines[::-1]


class Monitor(threading.Thread):
    """Talks to the store for one rank; never touches the collective group."""

    def __init__(self, runtime: Runtime, connect: Callable[[], dist.Store]) -> None:
        super().__init__(name="guards-monitor", daemon=True)
        self.rt = runtime
        self._connect = connect
        self.ex: exchange.Exchange | None = None
        self.wake = threading.Event()
        self.connected = threading.Event()
        self.reporting = threading.Event()
        self.ok = threading.Event()
        self.stopped = threading.Event()
        self.beat = 0
        self._words: dict[tuple, tuple[str, str]] = {}
        self._peers: dict[int, tuple[int, int] | None] = {}
        self._host = socket.gethostname()
        self._agg_seen: dict[int, tuple[int, float]] = {}
        self._aggregator = runtime.rank in exchange.aggregators(runtime.world_size)
        self.interval = config.interval_for(runtime.config, runtime.world_size)

    # --- thread -------------------------------------------------------------------------------
    def run(self) -> None:
        try:
            self.ex = exchange.Exchange(self._connect(), self.rt.rank, self.rt.world_size)
            local = int(os.environ.get("LOCAL_RANK", self.rt.rank))
            self.ex.register_local(self._host, local)
            self.connected.set()
        except Exception as exc:
            self.stopped.set()
            self.rt.disable(f"cannot reach the c10d store ({type(exc).__name__}: {exc})")
            return
        try:
            while not self.ok.is_set():
                self.tick()
                self.wake.wait(self.interval)
                self.wake.clear()
        except Exception as exc:
            if not self.ok.is_set() and not self.reporting.is_set():
                self.rt.disable(f"internal error ({type(exc).__name__}: {exc})")
        finally:
            self.stopped.set()

    def poke(self) -> None:
        self.wake.set()

    def tick(self) -> None:
        ex = self.ex
        assert ex is not None
        self.publish()
        if self._aggregator:
            found = verdict.analyze(
                ex.read(list(range(self.rt.world_size))),
                self.rt.world_size,
                self.rt.config.hang_timeout,
            )
            if found is not None:
                ex.propose(found)
        self.check_peers()
        held = ex.verdict()
        if held is not None:
            self.handle(held)

    def publish(self) -> None:
        ex = self.ex
        assert ex is not None
        self.beat += 1
        ex.publish(self.summary())

    # --- what this rank says ------------------------------------------------------------------
    def _words_of(self, op: str, meta: tuple) -> tuple[str, str]:
        key = (op, meta)
        words = self._words.get(key)
        if words is None:
            words = describe(op, meta)
            self._words[key] = words
        return words

    def _group_summary(self, g: GroupLedger) -> dict[str, Any]:
        wait = g.oldest_wait()
        return {
            "ranks": None if g.name == "WORLD" else g.ranks,
            "n": g.count,
            "w": [wait[0], round(wait[1], 2)] if wait else None,
            "e": [
                [s, fp, *self._words_of(op, meta), site]
                for s, fp, _, op, meta, site in g.last(WINDOW)
            ],
            "c": g.checkpoints(),
        }

    def summary(self) -> dict[str, Any]:
        return {
            "r": self.rt.rank,
            "st": self.rt.state,
            "hb": self.beat,
            "g": {g.name: self._group_summary(g) for g in self.rt.ledger.all()},
            "ps": self.rt.params.summary(),
        }

    def here(self) -> str:
        """Where this rank is: the collective it waits in, or its current line."""
        for g in self.rt.ledger.all():
            wait = g.oldest_wait()
            entry = g.entry(wait[0]) if wait else None
            if entry is not None:
                op, extra = self._words_of(entry[3], entry[4])
                call = report.call_text({"op": op, "extra": extra, "site": entry[5]})
                return f"it waits in {call} (collective #{entry[0] + 1} on {g.name})"
        if self.rt.state == "fin":
            return "it has finished its script"
        frame = sys._current_frames().get(threading.main_thread().ident or -1)
        while frame is not None and not _user_code(frame.f_code):
            frame = frame.f_back
        if frame is None:
            return "it is not in a collective"
        return f"it is at {site_of(frame)}, not in a collective"

    def aggregators_alive(self, patience: float = 15.0) -> bool:
        """Whether a rank that can declare the run clean is still publishing."""
        if self._aggregator:
            return True
        ex = self.ex
        assert ex is not None
        now = time.monotonic()
        for r in exchange.aggregators(self.rt.world_size):
            s = ex.read_one(r)
            if s is None or s.get("st") == "off":
                continue
            beat, since = self._agg_seen.get(r, (-1, now))
            if s.get("hb") != beat:
                self._agg_seen[r] = (s.get("hb", -1), now)
                return True
            if now - since < patience:
                return True
        return False

    # --- peers on this host -------------------------------------------------------------------
    def check_peers(self) -> None:
        ex = self.ex
        assert ex is not None
        local_size = int(os.environ.get("LOCAL_WORLD_SIZE", self.rt.world_size))
        for local in range(local_size):
            peer = self._peers.get(local)
            if peer is None:
                self._peers[local] = ex.local_peer(self._host, local)
                continue
            rank, pid = peer
            if pid < 0 or rank == self.rt.rank or _alive(pid):
                continue
            self._peers[local] = (rank, -1)  # judge a dead peer once
            if ex.verdict() is not None:
                continue
            last = ex.read_one(rank) or {}
            if last.get("st") == "off":
                continue
            world = last.get("g", {}).get("WORLD", {"n": 0, "e": []})
            entries = world.get("e") or []
            found: dict[str, Any] = {"kind": "vanished", "rank": rank, "count": world["n"]}
            found["by"] = self.rt.rank
            if entries:
                e = entries[-1]
                found["last"] = {"rank": rank, "seq": e[0], "op": e[2], "extra": e[3], "site": e[4]}
            ex.propose(found)

    # --- reporting ----------------------------------------------------------------------------
    def handle(self, held: dict[str, Any]) -> None:
        kind = held["kind"]
        if kind == "ok":
            self.ok.set()
            return
        if kind in ("failed", "exited") and held["rank"] == self.rt.rank:
            return  # the main thread reports its own failure
        self.reporting.set()
        lines = self.collect_and_render(held)
        self.finish_report(held, lines, report.EXIT_STATUS)
        self.wait_acks()
        self.rt.abort_and_exit(report.EXIT_STATUS)

    def collect_and_render(self, held: dict[str, Any]) -> list[str]:
        ex = self.ex
        assert ex is not None
        reps = held.get("reps", [])
        if self.rt.rank in reps:
            if held["kind"] == "params":
                ex.put_detail(self.rt.params.details(held))
            else:
                ex.put_detail(main_stack())
        details: dict[int, Any] = {}
        deadline = time.monotonic() + DETAIL_WAIT
        while reps and time.monotonic() < deadline:
            for r in reps:
                if r not in details:
                    value = ex.get_detail(r)
                    if value is not None:
                        details[r] = value
            if len(details) == len(reps):
                break
            time.sleep(0.05)
        return report.render(held, details, self.rt.rank, self.here())

    def finish_report(self, held: dict[str, Any], lines: list[str], status: int) -> None:
        report.stream().write("\n".join(lines) + "\n")
        report.stream().flush()
        with contextlib.suppress(Exception):
            directory = Path(self.rt.config.report_dir)
            directory.mkdir(parents=True, exist_ok=True)
            ledger = {
                g.name: [
                    {"seq": s, "op": self._words_of(op, meta)[0], "site": site}
                    for s, _, _, op, meta, site in g.last(32)
                ]
                for g in self.rt.ledger.all()
            }
            body = {"rank": self.rt.rank, "status": status, "verdict": held, "lines": lines}
            body["ledger"] = ledger
            path = directory / f"rank{self.rt.rank}.json"
            path.write_text(json.dumps(body, indent=1))

    def wait_acks(self, expected: int | None = None) -> None:
        ex = self.ex
        if ex is None:
            return
        with contextlib.suppress(Exception):
            ex.ack()
            want = self.rt.world_size if expected is None else expected
            deadline = time.monotonic() + ACK_WAIT
            while time.monotonic() < deadline and ex.acks() < want:
                time.sleep(0.05)

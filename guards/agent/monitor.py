"""The per-rank monitor thread: publish a summary, judge, report, and stop the process."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import socket
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from torch._C._distributed_c10d import Store

from ..hooks.params import ModelChecks, ParamChecker
from ..judge import verdict
from ..protocol import exchange
from ..protocol.exchange import Detail
from ..protocol.messages import (
    Call,
    Checkpoint,
    Digest,
    Entry,
    Exited,
    Failed,
    GroupSummary,
    Hang,
    ModelSummary,
    Ok,
    Params,
    Place,
    State,
    Stranded,
    Summary,
    Verdict,
    Wait,
)
from ..record.callsite import site_of
from ..record.fingerprint import describe
from ..record.ledger import GroupLedger, Ledger
from . import config, report, root_cause
from .location import Whereabouts, main_frame, main_stack, user_code

WINDOW = 8
ACK_WAIT = 2.0
DETAIL_WAIT = 3.0
VANISH_GRACE = 0.5  # a dead peer's last summaries may still be on their way: evidence first
STRANDED_AFTER = 2.0  # a finished rank ends a job whose running ranks all sit this long in an
LEAVE_AFTER = 5.0  # unrecorded communication call; it leaves after this long without progress
SILENT = 15.0  # a peer whose heartbeat stops this long is not waited for at the end
ORPHAN_CHECK = 2.0
CULPRIT_WAIT = 5.0  # seconds a survivor waits for the failing rank's process to end


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


class Host(Protocol):
    """What the monitor reads and calls of this process's guard (`guards.agent.runtime.Runtime`)."""

    rank: int
    world_size: int
    state: State
    terminating: bool
    config: config.Config
    ledger: Ledger
    params: ParamChecker

    def hang_timeout(self) -> float: ...

    def disable(self, reason: str) -> None: ...

    def abort_and_exit(self, status: int) -> None: ...

    def release(self) -> None: ...


class Monitor(threading.Thread):
    """Talks to the store for one rank; never touches the collective group."""

    def __init__(self, runtime: Host, connect: Callable[[], Store]) -> None:
        super().__init__(name="guards-monitor", daemon=True)
        self.rt = runtime
        self._connect = connect
        self.ex: exchange.Exchange | None = None
        self.wake = threading.Event()
        self.connected = threading.Event()
        self.reporting = threading.Event()
        self.printed = threading.Event()
        self.ok = threading.Event()  # the run ended cleanly for this rank: it may leave
        self.stopped = threading.Event()
        self.leaving = False  # left without the others (no acknowledgements to wait for)
        self.acked = False  # this rank acknowledged the verdict
        self.beat = 0
        self.ticks = 0
        self.dead: dict[int, float] = {}  # rank -> when its process was found gone
        self._at: Place | None = None
        self._whereabouts = Whereabouts()
        self._words: dict[tuple[Any, ...], tuple[str, str]] = {}
        self._peers: dict[int, tuple[int, int] | None] = {}
        self._host = socket.gethostname()
        self._beats: dict[int, tuple[int, float]] = {}
        self._warned: set[str] = set()
        self._finished_beats: dict[int, int] | None = None
        self._orphan_check = 0.0
        self._publishing = threading.RLock()
        self._aggregator = runtime.rank in exchange.aggregators(runtime.world_size)
        self.interval = config.interval_for(runtime.config, runtime.world_size)

    # --- thread -------------------------------------------------------------------------------
    def run(self) -> None:
        try:
            self.ex = exchange.Exchange(self._connect(), self.rt.rank, self.rt.world_size)
            other = self.ex.claim_version()
            local = int(os.environ.get("LOCAL_RANK", self.rt.rank))
            self.ex.register_local(self._host, local)
            self.connected.set()
        except Exception as exc:
            self.stopped.set()
            self.rt.disable(f"cannot reach the c10d store ({type(exc).__name__}: {exc})")
            return
        try:
            if other is not None:
                self.rt.disable(exchange.version_conflict(self.ex.version, other))
            while not self.ok.is_set() and self.rt.state is not State.OFF:
                self.tick()
                self.wake.wait(self.interval)
                self.wake.clear()
        except Exception as exc:
            if not self.ok.is_set() and not self.reporting.is_set():
                self.rt.disable(f"internal error in the monitor ({type(exc).__name__}: {exc})")
        finally:
            self.stopped.set()

    def poke(self) -> None:
        self.wake.set()

    def halt(self, timeout: float = 2.0) -> None:
        """Stop the thread and wait (bounded) until it has: a thread cut by the interpreter's
        exit inside a store call (C++, without the GIL) aborts the process (SIGABRT)."""
        self.ok.set()
        self.poke()
        if threading.current_thread() is not self:
            self.join(timeout)

    def tick(self) -> None:
        ex = self.ex
        assert ex is not None
        other = ex.conflict()
        if other is not None:
            self.rt.disable(exchange.version_conflict(ex.version, other))
            return
        self._at = self._whereabouts.update(*self._progress())
        self.publish()
        held = ex.verdict()
        if held is None:
            self.check_peers()
            if self._judges():
                held = self.judge()
        if held is not None:
            self.handle(held)
        self.ticks += 1

    def publish(self) -> None:
        """Publish this rank's summary. One at a time, from any thread: a summary taken before
        the script ended never overwrites the one taken after (peers would read a rank that
        left by ``os._exit`` as still inside its last collective)."""
        ex = self.ex
        assert ex is not None
        with self._publishing:
            self.beat += 1
            ex.publish(self.summary())

    # --- judging ------------------------------------------------------------------------------
    def _progress(self) -> tuple[int, bool]:
        groups = self.rt.ledger.all()
        return sum(g.count for g in groups), any(g.oldest_wait() for g in groups)

    def _judges(self) -> bool:
        """Aggregators judge; so does a finished rank, a rank that saw a peer die, and a waiting
        rank once no aggregator is left running."""
        if self._aggregator or self.rt.state is State.FIN or self.dead:
            return True
        now = time.monotonic()
        if now - self._orphan_check < ORPHAN_CHECK or not self._progress()[1]:
            return False
        self._orphan_check = now
        ex = self.ex
        assert ex is not None
        for r in exchange.aggregators(self.rt.world_size):
            s = ex.read_one(r)
            if r not in self.dead and (s is None or s.state is State.RUN):
                return False
        return True

    def judge(self) -> Verdict | None:
        """Read every summary and propose what is found; return the verdict that holds."""
        ex = self.ex
        assert ex is not None
        summaries = ex.read(list(range(self.rt.world_size)))
        now = time.monotonic()
        dead = {r for r, t in self.dead.items() if now - t >= VANISH_GRACE or self.rt.terminating}
        found = verdict.analyze(summaries, self.rt.world_size, self.rt.hang_timeout(), dead)
        if found is not None:
            return ex.propose(found)
        if self._aggregator and self.rt.config.hang_warn < self.rt.hang_timeout():
            self.warn_if_slow(summaries)
        # leave only once peers can see this rank finished, its final digests included: a
        # summary taken just before the script ended may be the last one they ever read
        mine = summaries.get(self.rt.rank)
        if mine is not None and mine.state is State.FIN:
            if self._finished_beats is None:
                self._finished_beats = {r: s.beat for r, s in summaries.items()}
            # judged on what peers published after this rank finished, never on older news
            fresh = {r for r, s in summaries.items() if s.beat != self._finished_beats.get(r)}
            decision = verdict.departure(
                summaries,
                fresh,
                self.rt.rank,
                self.rt.world_size,
                set(self.dead) | self._silent(summaries, now),
                STRANDED_AFTER,
                LEAVE_AFTER,
            )
            if decision == verdict.LEAVE:
                self.leaving = True
                self.ok.set()
            elif isinstance(decision, Stranded):
                for done in decision.done:
                    done.script = os.path.basename(sys.argv[0]) if sys.argv else ""
                return ex.propose(decision)
        return None

    def _silent(self, summaries: dict[int, Summary], now: float) -> set[int]:
        """Peers whose summary has not changed for SILENT s; a peer that never published one
        counts from the first look (its process may have ended unseen)."""
        out = set()
        for r in range(self.rt.world_size):
            s = summaries.get(r)
            beat = s.beat if s is not None else -1
            seen, since = self._beats.setdefault(r, (beat, now))
            if beat != seen:
                self._beats[r] = (beat, now)
            elif now - since > SILENT:
                out.add(r)
        return out

    def warn_if_slow(self, summaries: dict[int, Summary]) -> None:
        found = verdict.slow(summaries, self.rt.world_size, self.rt.config.hang_warn)
        if found is None:
            return
        key = f"{found.group}/{found.seq}"
        if key in self._warned:
            return
        self._warned.add(key)
        ex = self.ex
        assert ex is not None
        if ex.claim(f"warned/{key}"):
            report.stream().write("\n".join(report.warning(found, self.rt.hang_timeout())) + "\n")
            report.stream().flush()

    # --- what this rank says ------------------------------------------------------------------
    def _words_of(self, op: str, meta: tuple[Any, ...]) -> tuple[str, str]:
        key = (op, meta)
        words = self._words.get(key)
        if words is None:
            words = describe(op, meta)
            self._words[key] = words
        return words

    def _group_summary(self, g: GroupLedger) -> GroupSummary:
        wait = g.oldest_wait()
        return GroupSummary(
            None if g.name == "WORLD" else g.ranks,
            g.count,
            Wait(wait[0], round(wait[1], 2)) if wait else None,
            [
                Entry(e.seq, e.fingerprint, *self._words_of(e.op, e.meta), e.site)
                for e in g.last(WINDOW)
            ],
            [Checkpoint(seq, digest) for seq, digest in g.checkpoints()],
        )

    @staticmethod
    def _model_summary(checks: ModelChecks) -> ModelSummary:
        final = checks.final
        return ModelSummary(
            checks.ranks,
            [Digest(c.step, c.digest) for c in checks.published()],
            Digest(final.step, final.digest) if final is not None else None,
        )

    def summary(self) -> Summary:
        return Summary(
            self.rt.rank,
            self.rt.state,
            self.beat,
            {g.name: self._group_summary(g) for g in self.rt.ledger.all()},
            {k: self._model_summary(c) for k, c in list(self.rt.params.models.items())},
            self._at,
        )

    def here(self) -> str:
        """Where this rank is: the collective it waits in, or its current line."""
        for g in self.rt.ledger.all():
            wait = g.oldest_wait()
            entry = g.entry(wait[0]) if wait else None
            if entry is not None:
                op, extra = self._words_of(entry.op, entry.meta)
                call = report.call_text(Call(self.rt.rank, entry.seq, op, extra, entry.site))
                return f"it waits in {call} (collective #{entry.seq + 1} on {g.name})"
        if self.rt.state is State.FIN:
            return "it has finished its script"
        frame = main_frame()
        while frame is not None and not user_code(frame.f_code):
            frame = frame.f_back
        if frame is None:
            return "it is not in a collective"
        return f"it is at {site_of(frame)}, not in a collective"

    # --- peers on this host -------------------------------------------------------------------
    def check_peers(self) -> None:
        """Note the ranks on this host whose process is gone (judged with the evidence)."""
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
            self._peers[local] = (rank, -1)
            self.dead[rank] = time.monotonic()

    # --- reporting ----------------------------------------------------------------------------
    def handle(self, held: Verdict) -> None:
        if isinstance(held, Ok):
            self.ok.set()
            return
        if isinstance(held, (Failed, Exited)) and held.rank == self.rt.rank:
            return  # the main thread reports its own failure
        self.reporting.set()
        culprit = root_cause.culprit(held)
        pid = self._pid_of(culprit) if culprit is not None else None
        lines = self.collect_and_render(held, culprit if pid is not None else None)
        self.finish_report(held, lines, report.EXIT_STATUS)
        self.wait_acks()
        if pid is not None:
            self._leave_after(pid)
        self.rt.abort_and_exit(report.EXIT_STATUS)

    def _pid_of(self, rank: int) -> int | None:
        """The process id of ``rank`` when it runs on this host (-1: known to be gone)."""
        if rank == self.rt.rank:
            return None
        ex = self.ex
        assert ex is not None
        with contextlib.suppress(Exception):
            for local in range(int(os.environ.get("LOCAL_WORLD_SIZE", self.rt.world_size))):
                peer = self._peers.get(local) or ex.local_peer(self._host, local)
                if peer is not None and peer[0] == rank:
                    return peer[1]
        return None

    def _leave_after(self, pid: int) -> None:
        """Stay until the failing rank's process has ended, then until torchrun ends this one
        (see ``agent.root_cause``); bounded, so that a stuck peer never holds the job."""
        self.rt.release()
        deadline = time.monotonic() + CULPRIT_WAIT
        gone = pid < 0 or root_cause.wait_until_gone(_alive, pid, deadline)
        if gone and root_cause.under_torchrun():
            time.sleep(root_cause.TERM_WAIT)  # torchrun's SIGTERM ends the process meanwhile

    def collect_and_render(self, held: Verdict, after: int | None = None) -> list[str]:
        ex = self.ex
        assert ex is not None
        reps = held.reps if isinstance(held, (Hang, Params)) else []
        if self.rt.rank in reps:
            if isinstance(held, Params):
                ex.put_detail(self.rt.params.details(held.model, held.step, held.final))
            else:
                ex.put_detail(main_stack())
        details: dict[int, Detail] = {}
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
        here, torchrun = self.here(), root_cause.under_torchrun()
        return report.render(held, details, self.rt.rank, here, after=after, torchrun=torchrun)

    def finish_report(self, held: Verdict, lines: list[str], status: int) -> None:
        report.stream().write("\n".join(lines) + "\n")
        report.stream().flush()
        self.printed.set()
        with contextlib.suppress(Exception):
            directory = Path(self.rt.config.report_dir)
            directory.mkdir(parents=True, exist_ok=True)
            ledger = {
                g.name: [
                    {"seq": e.seq, "op": self._words_of(e.op, e.meta)[0], "site": e.site}
                    for e in g.last(32)
                ]
                for g in self.rt.ledger.all()
            }
            found = {"kind": held.kind.value, **dataclasses.asdict(held)}
            body = {"rank": self.rt.rank, "status": status, "verdict": found, "lines": lines}
            body["ledger"] = ledger
            path = directory / f"rank{self.rt.rank}.json"
            path.write_text(json.dumps(body, indent=1))

    def wait_acks(self) -> None:
        """Acknowledge the verdict; wait (briefly) until every rank that can has read it: not
        a rank whose process is gone, nor one whose guard is off (it never reads verdicts)."""
        ex = self.ex
        if ex is None:
            return
        with contextlib.suppress(Exception):
            ex.ack()
            self.acked = True
            gone = [r for r in self.dead if not _off(ex.read_one(r))]
            want = self.rt.world_size - len(gone)
            deadline = time.monotonic() + ACK_WAIT
            while time.monotonic() < deadline and ex.acks() + ex.offs() < want:
                time.sleep(0.05)


def _off(summary: Summary | None) -> bool:
    return summary is not None and summary.state is State.OFF

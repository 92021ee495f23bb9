"""How a rank's end reaches its peers: ``os._exit``, a guard turned off, a peer never heard of.

Monitors of a 2-rank job share an in-memory c10d store and are driven by hand (no threads of
their own), so that the interleavings a loaded machine produces only now and then are replayed
exactly.
"""

from __future__ import annotations

import threading

import pytest
from torch._C._distributed_c10d import HashStore

import guards.agent.monitor as monitor_module
import guards.agent.runtime as runtime_module
from guards.agent.monitor import SILENT, Monitor
from guards.agent.runtime import Runtime
from guards.hooks.params import ParamChecker
from guards.protocol import exchange
from guards.protocol.messages import Ok, State


def _rank(store: HashStore, rank: int, *, connected: bool = True) -> Monitor:
    """The monitor of ``rank`` in a 2-rank job (not started: its ticks are driven by hand)."""
    rt = Runtime()
    rt.rank, rt.world_size = rank, 2
    rt.params = ParamChecker(0)
    mon = Monitor(rt, lambda: store)
    rt.monitor = mon
    if connected:
        mon.ex = exchange.Exchange(store, rank, 2)
        mon.connected.set()
    return mon


class _ConnectsMeanwhile(threading.Event):
    """A monitor's ``connected`` that the monitor thread sets while someone waits for it: the
    interleaving of a rank whose script ends just before its monitor reached the store."""

    def __init__(self, mon: Monitor, store: HashStore) -> None:
        super().__init__()
        self._mon, self._store = mon, store

    def wait(self, timeout: float | None = None) -> bool:
        if not self.is_set():
            self._mon.ex = exchange.Exchange(self._store, self._mon.rt.rank, 2)
            self.set()
        return super().wait(timeout)


class _Exited(Exception):
    pass


def _no_exit(status: int) -> None:
    raise _Exited(status)


def test_os_exit_before_the_monitor_connected_still_tells_the_peers(monkeypatch) -> None:
    """Rank 1 leaves by os._exit(0) while its monitor is still connecting (os_exit_zero under
    load): it publishes its end once connected, and rank 0 ends cleanly instead of waiting."""
    monkeypatch.setattr(runtime_module, "_real_exit", _no_exit)
    store = HashStore()
    first, last = _rank(store, 0), _rank(store, 1, connected=False)
    last.connected = _ConnectsMeanwhile(last, store)
    with pytest.raises(_Exited):
        last.rt._os_exit(0)
    first.rt.state = State.FIN
    first.publish()
    assert first.judge() == Ok()


def test_a_finished_rank_stops_waiting_for_a_peer_never_heard_of(monkeypatch) -> None:
    """A peer that never published (it ended before its monitor reached the store) is not
    waited for past SILENT s: the finished rank leaves as it would without the guard."""
    clock = [1000.0]
    monkeypatch.setattr(monitor_module.time, "monotonic", lambda: clock[0])
    first = _rank(HashStore(), 0)
    first.rt.state = State.FIN
    first.publish()
    assert first.judge() is None
    assert not first.ok.is_set()
    clock[0] += SILENT + 1
    first.publish()
    assert first.judge() is None
    assert first.ok.is_set() and first.leaving


def test_peers_do_not_wait_for_the_acknowledgement_of_a_rank_whose_guard_is_off(
    monkeypatch,
) -> None:
    store = HashStore()
    first, last = _rank(store, 0), _rank(store, 1)
    last.rt.disable("injected")  # e.g. an internal error of the guard on rank 1
    slept: list[float] = []
    monkeypatch.setattr(monitor_module.time, "sleep", slept.append)
    monkeypatch.setattr(monitor_module, "ACK_WAIT", 0.2)
    first.wait_acks()
    assert slept == [], "waited for an acknowledgement that never comes"


def test_a_summary_taken_before_the_script_ended_never_overwrites_the_last_one() -> None:
    """The monitor thread takes a summary (running) while the script ends and publishes its
    end from another thread: peers must read the end, not the older summary."""
    store = HashStore()
    mon = _rank(store, 1)
    taken, go = threading.Event(), threading.Event()
    summary = mon.summary

    def slow_summary():  # the monitor thread's summary, written after the script's end
        found = summary()
        if threading.current_thread().name == "tick":
            taken.set()
            go.wait(5)
        return found

    mon.summary = slow_summary  # type: ignore[method-assign]
    tick = threading.Thread(target=mon.publish, name="tick")
    tick.start()
    assert taken.wait(5)
    mon.rt.state = State.FIN
    end = threading.Thread(target=mon.publish)
    end.start()
    end.join(0.5)  # without one publish at a time, the end is written now, then overwritten
    go.set()
    tick.join(5)
    end.join(5)
    read = exchange.Exchange(store, 0, 2).read_one(1)
    assert read is not None and read.state is State.FIN

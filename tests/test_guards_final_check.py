"""The last parameter check is compared whatever order the ranks finish and leave in.

Two monitors (ranks 0 and 1 of one DDP model) share an in-memory c10d store; their ticks are
driven step by step, so the interleavings a loaded machine produces only now and then (a rank
whose script ends between publishing its summary and judging) are replayed exactly.
"""

from __future__ import annotations

import time
from array import array

from torch._C._distributed_c10d import HashStore

from guards.agent.monitor import LEAVE_AFTER, VANISH_GRACE, Monitor
from guards.agent.runtime import Runtime
from guards.hooks.params import Check, ModelChecks, ParamChecker
from guards.protocol import exchange
from guards.protocol.messages import Ok, Params, Place, State

MODEL = "WORLD#0"
BUSY = Place(LEAVE_AFTER + 1, 0.0, "", ["train.py:30 in <module>"])


def _rank(store: HashStore, rank: int) -> Monitor:
    """The monitor of ``rank`` in a 2-rank job, connected but not started (ticks by hand)."""
    rt = Runtime()
    rt.rank, rt.world_size = rank, 2
    rt.params = ParamChecker(100)
    mon = Monitor(rt, lambda: store)
    mon.ex = exchange.Exchange(store, rank, 2)
    return mon


def _finish(mon: Monitor, digest: int) -> None:
    """What ``Runtime.finish`` does when the script ends: the final check, then ``fin``."""
    checks = mon.rt.params.models.setdefault(MODEL, ModelChecks([0, 1]))
    names = ("module.0.weight",)
    checks.final = Check(60, digest, names, array("q", [digest]), time.monotonic())
    mon.rt.state = State.FIN


def test_a_rank_leaves_only_after_publishing_its_final_digest() -> None:
    store = HashStore()
    first, last = _rank(store, 0), _rank(store, 1)
    _finish(last, 222)
    last.publish()
    first.publish()  # a tick takes rank 0's summary while its script still runs...
    _finish(first, 111)  # ...the script ends before that tick judges
    assert first.judge() is None
    assert not first.ok.is_set(), "left while its peers still read it as running, unchecked"
    first.publish()  # the next tick
    held = first.judge()
    assert isinstance(held, Params)
    assert (held.final, held.sides) == (True, [[0], [1]])


def test_equal_replicas_still_end_cleanly_one_tick_later() -> None:
    store = HashStore()
    first, last = _rank(store, 0), _rank(store, 1)
    _finish(last, 111)
    last.publish()
    first.publish()
    _finish(first, 111)
    assert first.judge() is None
    first.publish()
    assert first.judge() == Ok()


def test_the_last_rank_compares_the_final_digest_of_a_rank_that_left() -> None:
    store = HashStore()
    first, last = _rank(store, 0), _rank(store, 1)
    _finish(first, 111)
    first.publish()
    assert first.judge() is None
    last._at = BUSY  # rank 1 is busy outside any collective (saving, evaluating)
    last.publish()
    first.publish()
    assert first.judge() is None
    assert first.ok.is_set() and first.leaving  # as the plain run would, rank 0 exits
    last.dead[0] = time.monotonic() - VANISH_GRACE
    _finish(last, 222)
    last.publish()
    held = last.judge()
    assert isinstance(held, Params)
    assert (held.final, held.sides) == (True, [[0], [1]])

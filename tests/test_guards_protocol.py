"""The cross-rank protocol: typed messages survive the store, and guards of different protocol
versions in one job turn themselves off with one line instead of misreading each other."""

from __future__ import annotations

import json
import sys

import pytest
from guards_helpers import CORPUS, environment, free_port, run
from torch._C._distributed_c10d import HashStore, PrefixStore

from guards.protocol import exchange, wire
from guards.protocol.messages import (
    Blocked,
    Call,
    Checkpoint,
    Digest,
    Diverged,
    Entry,
    Exited,
    Failed,
    Finished,
    Finisher,
    GroupSummary,
    Hang,
    Mismatch,
    ModelSummary,
    Ok,
    Params,
    Place,
    Slow,
    State,
    Stranded,
    Summary,
    Vanished,
    Verdict,
    Wait,
)

CALL = Call(1, 4, "all_reduce float32[4]", "op=max", "train.py:9", age=1.5, count=5)
VERDICTS: list[Verdict] = [
    Ok(),
    Mismatch("WORLD", 3, [[CALL], [Call(0, 3)]]),
    Diverged("group 1 [0,1]", 31, [[CALL]]),
    Finished("WORLD", [CALL], [CALL], [CALL]),
    Hang("WORLD", [CALL], [CALL], [1], 30.0),
    Slow("WORLD", 4, [CALL], [Call(0, 3, stack=["a.py:1 in f: g()"])]),
    Vanished(1, 5, "WORLD", None),
    Stranded([Finisher(0, {"WORLD": 5}, CALL, "train.py")], [Blocked(1, "recv", ["x"], 2.5)]),
    Failed(2, "OutOfMemoryError", "CUDA out of memory", "train.py:12", ["cuda:0 ..."]),
    Exited(0, 3, "train.py:20"),
    Params("WORLD#0", 60, True, [[0, 2], [1]], [0, 1]),
]


@pytest.mark.parametrize("verdict", VERDICTS, ids=lambda v: v.kind.value)
def test_every_verdict_comes_back_from_the_store_as_it_went_in(verdict: Verdict) -> None:
    back = wire.decode_verdict(wire.encode_verdict(verdict))
    assert type(back) is type(verdict) and back == verdict


def test_a_summary_comes_back_typed_and_travels_compact() -> None:
    group = GroupSummary(
        [0, 1], 17, Wait(16, 2.5), [Entry(16, 2**62, "barrier", "", "t.py:3")], [Checkpoint(15, 7)]
    )
    summary = Summary(
        1,
        State.FIN,
        9,
        {"group 1 [0,1]": group},
        {"WORLD#0": ModelSummary([0, 1], [Digest(5, 11)], Digest(60, 12))},
        Place(1.5, 0.0, "", ["t.py:4 in main: save()"]),
    )
    text = wire.encode_summary(summary)
    back = wire.decode_summary(text)
    assert back == summary
    assert back.state is State.FIN and isinstance(back.groups["group 1 [0,1]"].wait, Wait)
    assert isinstance(json.loads(text), list)  # positional on the wire: no repeated keys


def test_ranks_of_two_protocol_versions_both_find_the_conflict(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store = HashStore()
    first = exchange.Exchange(store, 0, 2)
    assert first.claim_version() is None
    assert first.conflict() is None  # rank 1 has not connected yet
    monkeypatch.setattr(wire, "VERSION", wire.VERSION + 1)
    second = exchange.Exchange(store, 1, 2)
    assert second.claim_version() == str(wire.VERSION - 1)
    assert first.conflict() == str(wire.VERSION)
    line = exchange.version_conflict(first.version, str(wire.VERSION))
    assert "\n" not in line and "install the same guards on every node" in line


def test_once_every_rank_joined_one_version_no_rank_looks_for_another() -> None:
    store = HashStore()
    ranks = [exchange.Exchange(store, r, 2) for r in range(2)]
    for ex in ranks:
        assert ex.claim_version() is None
        ex.publish(Summary(ex.rank))
    PrefixStore(exchange.namespace(), store).set(exchange.CONFLICT, "9")
    assert [ex.conflict() for ex in ranks] == [None, None]  # no store traffic from then on


def test_a_guard_from_before_versioned_keys_is_found_and_sees_this_rank_as_off() -> None:
    store = HashStore()
    old = PrefixStore(exchange.namespace(), store)
    old.add("joined", 1)  # what a v1 guard's first publish does
    new = exchange.Exchange(store, 1, 2)
    assert new.claim_version() is None
    assert new.conflict() == "1"
    assert json.loads(old.get("s/1"))["st"] == "off"  # v1 leaves an "off" rank out


def test_two_guard_versions_in_one_job_turn_off_with_one_line_each_and_training_completes() -> None:
    cmd = [sys.executable, str(CORPUS / "two_versions.py"), str(free_port())]
    done = run(cmd, environment(), cwd=CORPUS, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert not done.survivors
    assert "rank 0 trained" in done.stdout and "rank 1 trained" in done.stdout
    lines = done.report_lines()
    assert len(lines) == 2, done.stderr[-3000:]  # one per process, nothing else from the guard
    new, old = wire.VERSION + 1, wire.VERSION
    for line in lines:
        assert line.startswith("[guards] disabled: another rank of this job runs guards protocol")
        assert {f"v{new}", f"v{old}"} <= set(line.replace(",", " ").split())

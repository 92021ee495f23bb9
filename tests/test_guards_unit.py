"""Fingerprints, comparison logic, configuration and hashing, without processes."""

from __future__ import annotations

import sys
import threading
import time
import types
import warnings

import pytest
import torch
import torch.distributed as dist

from guards.agent import config, report
from guards.agent import runtime as runtime_module
from guards.judge import verdict
from guards.protocol.messages import (
    Digest,
    Entry,
    Failed,
    GroupSummary,
    ModelSummary,
    Ok,
    State,
    Summary,
    Wait,
)
from guards.record.callsite import call_site
from guards.record.fingerprint import OP_CODES, describe, extractor
from guards.record.hashing import tensor_hash
from guards.record.ledger import CHECKPOINT, GroupLedger


def _meta(name: str, *args, **kwargs) -> tuple:
    return extractor(name, getattr(dist, name))(args, kwargs, (0, 1))


def _summary(
    rank: int, entries: list, *, n: int | None = None, wait=None, st: State = State.RUN
) -> Summary:
    rows = [Entry(seq, fp, op, "", f"train.py:{10 + seq}") for seq, fp, op in entries]
    count = n if n is not None else len(entries)
    group = GroupSummary(None, count, Wait(*wait) if wait else None, rows)
    return Summary(rank, st, 1, {"WORLD": group})


# --- fingerprints ---------------------------------------------------------------------------
def test_fingerprint_words_name_op_dtype_shape_and_extras() -> None:
    t = torch.ones(16)
    assert describe("all_reduce", _meta("all_reduce", t)) == ("all_reduce float32[16]", "")
    words = describe("all_reduce", _meta("all_reduce", t, op=dist.ReduceOp.MAX))
    assert words == ("all_reduce float32[16]", "op=max")
    assert describe("broadcast", _meta("broadcast", t, 1)) == ("broadcast float32[16]", "src=1")
    gathered = _meta("all_gather", [torch.ones(2, 3)] * 4, torch.ones(2, 3))
    assert describe("all_gather", gathered)[0] == "all_gather 4 x float32[2, 3]"
    assert describe("barrier", _meta("barrier"))[0] == "barrier"


def test_fingerprint_is_deterministic_and_separates_ops_shapes_groups() -> None:
    def fp(op: str, meta: tuple, group: str = "WORLD") -> int:
        g = GroupLedger(group, [0, 1])
        g.record(op, OP_CODES[op], meta, "x.py:1")
        return g.entry(0).fingerprint

    a = _meta("all_reduce", torch.ones(16))
    assert fp("all_reduce", a) == fp("all_reduce", _meta("all_reduce", torch.zeros(16)))
    assert fp("all_reduce", a) != fp("broadcast", _meta("broadcast", torch.ones(16), 0))
    assert fp("all_reduce", a) != fp("all_reduce", _meta("all_reduce", torch.ones(17)))
    assert fp("all_reduce", a) != fp("all_reduce", _meta("all_reduce", torch.ones(16).double()))
    assert fp("all_reduce", a) != fp("all_reduce", a, "group 1 [0,1]")


def test_rank_dependent_sizes_are_not_in_the_fingerprint() -> None:
    # all_to_all_single may split unevenly; only the dtype and trailing dims must agree
    a = _meta("all_to_all_single", torch.ones(3, 4), torch.ones(5, 4))
    b = _meta("all_to_all_single", torch.ones(7, 4), torch.ones(1, 4))
    assert a == b
    # gather_list exists only on the destination rank
    assert _meta("gather", torch.ones(2), [torch.ones(2)] * 2, 0) == _meta(
        "gather", torch.ones(2), None, 0
    )


def test_ledger_ring_and_checkpoint_digests() -> None:
    g = GroupLedger("WORLD", [0, 1])
    for _ in range(CHECKPOINT * 3):
        g.record("barrier", OP_CODES["barrier"], (), "x.py:1")
    assert g.count == CHECKPOINT * 3
    assert [seq for seq, _ in g.checkpoints()] == [CHECKPOINT * 3 - 1, CHECKPOINT * 2 - 1]
    assert [e.seq for e in g.last(3)] == [45, 46, 47]
    g.wait_begin(47)
    assert g.oldest_wait()[0] == 47
    g.wait_end(47)
    assert g.oldest_wait() is None


def test_call_site_is_the_callers_line() -> None:
    assert call_site(0).startswith("test_guards_unit.py:")


# --- verdicts -------------------------------------------------------------------------------
def test_mismatch_names_each_side_with_its_call_site() -> None:
    s0 = _summary(0, [(0, 1, "all_reduce float32[1]"), (1, 7, "all_reduce float32[16]")])
    s1 = _summary(1, [(0, 1, "all_reduce float32[1]"), (1, 9, "broadcast float32[16]")])
    found = verdict.analyze({0: s0, 1: s1}, 2, 300)
    assert found.kind.value == "mismatch" and found.seq == 1
    lines = report.describe(found, {})
    assert "  rank 0 all_reduce float32[16] at train.py:11" in lines
    assert "  rank 1 broadcast float32[16] at train.py:11" in lines


def test_majority_side_comes_first_with_many_ranks() -> None:
    summaries = {r: _summary(r, [(0, 5 if r != 2 else 6, "op")]) for r in range(4)}
    found = verdict.analyze(summaries, 4, 300)
    assert [c.rank for c in found.sides[0]] == [0, 1, 3]
    assert [c.rank for c in found.sides[1]] == [2]


def test_finished_rank_while_others_wait_is_reported_at_once() -> None:
    s0 = _summary(0, [(0, 1, "ar"), (1, 1, "ar")], wait=[1, 0.1])
    s1 = _summary(1, [(0, 1, "ar")], st=State.FIN)
    found = verdict.analyze({0: s0, 1: s1}, 2, 300)
    assert found.kind.value == "finished"
    assert found.done[0].rank == 1 and found.done[0].count == 1
    assert found.waiting[0].rank == 0


def test_hang_waits_for_the_timeout_then_asks_the_lagging_rank() -> None:
    s1 = _summary(1, [(0, 1, "ar")])
    young = _summary(0, [(0, 1, "ar"), (1, 2, "barrier")], wait=[1, 2.0])
    assert verdict.analyze({0: young, 1: s1}, 2, 3.0) is None
    old = _summary(0, [(0, 1, "ar"), (1, 2, "barrier")], wait=[1, 3.5])
    found = verdict.analyze({0: old, 1: s1}, 2, 3.0)
    assert found.kind.value == "hang" and found.reps == [1]
    lines = report.describe(found, {1: ["train.py:40 in main: time.sleep(5)"]})
    assert "    train.py:40 in main: time.sleep(5)" in lines


def test_clean_finish_is_ok_and_uneven_finish_is_not() -> None:
    same = {r: _summary(r, [(0, 1, "ar")], st=State.FIN) for r in range(2)}
    assert verdict.analyze(same, 2, 300) == Ok()
    uneven = {0: _summary(0, [(0, 1, "ar")], st=State.FIN), 1: _summary(1, [], st=State.FIN)}
    assert verdict.analyze(uneven, 2, 300).kind.value == "finished"
    assert verdict.analyze({0: same[0]}, 2, 300) is None  # rank 1 not heard from yet


def test_ranks_whose_guard_is_off_are_left_out() -> None:
    s0 = _summary(0, [(0, 1, "ar"), (1, 1, "ar")], wait=[1, 999.0])
    s1 = _summary(1, [], st=State.OFF)
    assert verdict.analyze({0: s0, 1: s1}, 2, 3.0) is None


def _ps(d: list, ranks: list[int], f: list | None = None) -> ModelSummary:
    return ModelSummary(ranks, [Digest(*x) for x in d], Digest(*f) if f else None)


def test_parameter_digests_compared_at_a_common_step() -> None:
    summaries = {r: _summary(r, []) for r in range(3)}
    summaries[0].models = {"WORLD#0": _ps([[5, 11], [10, 12]], [0, 1, 2])}
    summaries[1].models = {"WORLD#0": _ps([[5, 11], [10, 99]], [0, 1, 2])}
    summaries[2].models = {"WORLD#0": _ps([[5, 11]], [0, 1, 2])}
    assert verdict.params(summaries) is None  # step 5 agrees; step 10 not on every rank yet
    summaries[2].models = {"WORLD#0": _ps([[5, 11], [10, 12]], [0, 1, 2])}
    found = verdict.params(summaries)
    assert found.step == 10 and found.sides == [[0, 2], [1]]
    assert found.model == "WORLD#0" and not found.final
    details = {
        0: {"module.2.bias": 1, "module.0.weight": 2},
        1: {"module.2.bias": 3, "module.0.weight": 2},
    }
    lines = report.describe(found, details)
    assert "  module.2.bias differs on rank 1 from ranks 0, 2" in lines
    assert not any("module.0.weight" in x for x in lines)


def test_parameters_compared_only_among_the_replicas_of_each_model() -> None:
    summaries = {r: _summary(r, []) for r in range(4)}
    # two DDP groups of two ranks each (one model per group): different weights across groups
    for r in range(4):
        group = "group 1 [0,1]" if r < 2 else "group 2 [2,3]"
        ranks = [0, 1] if r < 2 else [2, 3]
        summaries[r].models = {f"{group}#0": _ps([[5, 100 + r // 2]], ranks)}
    assert verdict.params(summaries) is None
    summaries[3].models["group 2 [2,3]#0"].digests = [Digest(5, 7)]
    found = verdict.params(summaries)
    assert found.model == "group 2 [2,3]#0" and found.sides == [[2], [3]]


def test_processes_without_ddp_models_are_not_compared() -> None:
    summaries = {r: _summary(r, []) for r in range(2)}  # an ensemble: no models at all
    assert verdict.params(summaries) is None
    summaries[0].models = {"WORLD#0": _ps([[5, 1]], [0, 1])}  # rank 1 holds no replica yet
    assert verdict.params(summaries) is None


def test_final_digests_are_compared_at_the_end_of_a_short_run() -> None:
    summaries = {r: _summary(r, [], st=State.FIN) for r in range(2)}
    summaries[0].models = {"WORLD#0": _ps([], [0, 1], [60, 5])}
    summaries[1].models = {"WORLD#0": _ps([], [0, 1], [60, 6])}
    found = verdict.analyze(summaries, 2, 300)
    assert found.kind.value == "params" and found.final and found.step == 60
    summaries[1].models["WORLD#0"].final = Digest(60, 5)
    assert verdict.analyze(summaries, 2, 300) == Ok()


def test_render_prefixes_every_line() -> None:
    found = Failed(1, "ValueError", "x", "t.py:3")
    lines = report.render(found, {}, 0, "it waits in barrier at t.py:9")
    assert lines[0] == "[guards] rank 1 failed: ValueError: x at t.py:3"
    assert all(x.startswith("[guards] ") for x in lines)
    assert lines[-1] == f"[guards] rank 0 stops with exit status {report.EXIT_STATUS}"


# --- configuration --------------------------------------------------------------------------
def test_config_defaults_and_values() -> None:
    cfg = config.load({})
    assert (cfg.hang_timeout, cfg.param_check_every, cfg.disabled) == (None, 100, False)
    cfg = config.load(
        {"GUARDS_HANG_TIMEOUT": "3", "GUARDS_PARAM_CHECK_EVERY": "0", "GUARDS_DISABLE": "1"}
    )
    assert (cfg.hang_timeout, cfg.param_check_every, cfg.disabled) == (3.0, 0, True)


@pytest.mark.parametrize(
    "name,value",
    [
        ("GUARDS_HANG_TIMEOUT", "soon"),
        ("GUARDS_HANG_TIMEOUT", "-1"),
        ("GUARDS_PARAM_CHECK_EVERY", "2.5"),
    ],
)
def test_bad_config_values_warn_and_use_the_default(name: str, value: str) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cfg = config.load({name: value})
    assert cfg == config.load({})
    assert len(caught) == 1 and name in str(caught[0].message)


# --- parameter hashing ----------------------------------------------------------------------
@pytest.mark.parametrize(
    "dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int64, torch.bool]
)
def test_tensor_hash_is_order_sensitive_and_leaves_the_tensor_alone(dtype: torch.dtype) -> None:
    t = (torch.arange(12) % 5).to(dtype).reshape(3, 4)
    before = t.clone()
    h = tensor_hash(t)
    assert h.dtype == torch.int64 and h.dim() == 0
    assert torch.equal(t, before)
    assert int(tensor_hash(t)) == int(h)
    swapped = t.flatten().clone()
    swapped[[0, 1]] = swapped[[1, 0]]
    if not torch.equal(swapped, t.flatten()):
        assert int(tensor_hash(swapped)) != int(h)


def test_tensor_hash_sees_one_ulp() -> None:
    t = torch.randn(1000)
    u = t.clone()
    u[500] = torch.nextafter(u[500], torch.tensor(float("inf")))
    assert int(tensor_hash(t)) != int(tensor_hash(u))


def test_interval_grows_with_large_jobs_unless_set() -> None:
    assert config.interval_for(config.load({}), 8) == 0.25
    assert config.interval_for(config.load({}), 256) == 0.25
    assert config.interval_for(config.load({}), 1024) == 1.0
    assert config.interval_for(config.load({"GUARDS_INTERVAL": "0.5"}), 1024) == 0.5


def test_tensor_hash_does_not_depend_on_chunking_or_layout(monkeypatch: pytest.MonkeyPatch) -> None:
    from guards.record import hashing

    t = torch.randn(37, 11)
    whole = int(tensor_hash(t))
    monkeypatch.setattr(hashing, "CHUNK", 7)  # many chunks, rows longer than a chunk
    assert int(tensor_hash(t)) == whole
    transposed = t.t()  # not contiguous: hashed in row-major order like its contiguous copy
    assert int(tensor_hash(transposed)) == int(tensor_hash(transposed.contiguous()))
    monkeypatch.setattr(hashing, "CHUNK", 40)  # several short rows per chunk
    assert int(tensor_hash(transposed)) == int(tensor_hash(transposed.contiguous()))
    assert int(tensor_hash(t)) == whole


def test_tensor_hash_never_writes_to_int64_tensors() -> None:
    t = torch.arange(10, dtype=torch.int64)
    tensor_hash(t)
    assert torch.equal(t, torch.arange(10, dtype=torch.int64))


# --- replicas the job makes by hand -------------------------------------------------------------
def test_a_parameter_whose_gradient_was_all_reduced_is_a_replica_named_after_its_module() -> None:
    from guards.hooks.handmade import REDUCED, HandReplicas

    model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.ReLU(), torch.nn.Linear(2, 1))
    model(torch.randn(3, 2)).sum().backward()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    first, bias, *rest = model.parameters()
    REDUCED.on = True
    REDUCED.clear()
    REDUCED.note(first.grad.data, "WORLD", [0, 1])  # `.data` shares the gradient's storage
    REDUCED.note(rest[0].grad, "WORLD", [0, 1])
    REDUCED.note(bias.grad.clone(), "WORLD", [0, 1])  # a copy: the gradient itself is not reduced
    hand = HandReplicas()
    found = hand.on_step(opt, lambda: {id(rest[1])})  # a DDP parameter: checked as DDP's
    assert [r.key for r in found] == ["WORLD#grads0"] and found[0].ranks == [0, 1]
    assert [name for name, _ in found[0].named_tensors()] == ["0.weight", "2.weight"]


def test_a_freed_storage_reused_by_a_gradient_is_not_taken_for_a_reduced_one() -> None:
    from guards.hooks.handmade import REDUCED, HandReplicas

    param = torch.nn.Parameter(torch.zeros(4))
    opt = torch.optim.SGD([param], lr=0.1)
    REDUCED.on = True
    REDUCED.clear()
    for _ in range(50):  # metrics all-reduced and freed; gradients allocated afterwards
        REDUCED.note(torch.ones(4), "WORLD", [0, 1])
    param.grad = torch.ones(4)
    assert HandReplicas().on_step(opt, set) == []


def test_a_hand_made_replica_whose_parameters_are_gone_is_not_hashed_again() -> None:
    """After the script's module is dropped, a final check must not replace the last one with
    the hash of an empty list (the other ranks would seem to differ)."""
    from guards.hooks.handmade import REDUCED
    from guards.hooks.params import ParamChecker

    checker = ParamChecker(1)
    model = torch.nn.Linear(2, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    model(torch.randn(3, 2)).sum().backward()
    REDUCED.on = True
    for p in model.parameters():
        REDUCED.note(p.grad, "WORLD", [0, 1])
    opt.step()
    checker.on_step(opt)
    checker.finish()
    final = checker.models["WORLD#grads0"].final
    assert final is not None and final.digest != 0
    del model, opt, p
    checker.finish()
    again = checker.models["WORLD#grads0"].final
    assert again is not None and (again.step, again.digest) == (final.step, final.digest)


class _UndecidedMonitor:
    """A connected monitor that never decides (the os_exit_zero stall seen under load)."""

    def __init__(self) -> None:
        self.ok, self.stopped = threading.Event(), threading.Event()
        self.reporting, self.connected = threading.Event(), threading.Event()
        self.connected.set()
        self.ex = object()
        self.halted = False

    def poke(self) -> None:
        pass

    def halt(self, timeout: float = 2.0) -> None:
        self.halted = True
        self.ok.set()


def test_a_finished_rank_never_waits_past_the_finish_limit(monkeypatch) -> None:
    """The guard never holds a job that ended: a finished rank whose monitor does not decide
    leaves after FINISH_LIMIT, stopping the monitor first (no store call cut at exit)."""
    monkeypatch.setattr(runtime_module, "FINISH_LIMIT", 0.3)
    rt = runtime_module.Runtime()
    mon = _UndecidedMonitor()
    rt.monitor = mon  # type: ignore[assignment]
    started = time.monotonic()
    rt.finish(0)
    assert time.monotonic() - started < 5
    assert mon.halted


def test_a_bucket_reduced_on_a_stack_without_user_frames_is_named_by_its_backward() -> None:
    # On a GPU, autograd runs DDP's comm hook on its device thread: no user frame is on that
    # stack, and the line that ran the backward must name the bucket (not the forward's line).
    # CPU runs the hook on the caller's thread, so this asks the fallback directly.
    from guards.hooks import ddp

    backward = ddp.noting_backward(torch.autograd.backward)
    replica = types.SimpleNamespace(site="train.py:5")  # the model's last training forward
    x = torch.ones(2, requires_grad=True)
    backward((x * 2).sum())
    line = sys._getframe().f_lineno - 1
    try:
        assert ddp.bucket_site(None, replica) == f"test_guards_unit.py:{line}"  # type: ignore[arg-type]
        here = sys._getframe()
        assert ddp.bucket_site(here, replica) == f"test_guards_unit.py:{here.f_lineno}"  # type: ignore[arg-type]
    finally:
        ddp._backward["site"] = ""

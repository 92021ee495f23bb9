"""guards compare: the comparison logic on simulated recordings, the recorder in-process, and the
corpus/compare scripts run under torchrun (each culprit named with its cause at its step)."""

from __future__ import annotations

import json
import random
import re
import sys
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
from guards_helpers import REPO, Run, environment, run

from guards.compare import cli, entry, plot
from guards.compare.judge import DEFAULT_RTOL, judge
from guards.compare.launch import Launch, stragglers
from guards.compare.merge import load_run, merge
from guards.compare.records import Epoch, Loader, RankRecord, RankStep, RecordError, read_ranks

CORPUS = REPO / "corpus" / "compare"
pytestmark = pytest.mark.timeout(900)  # the corpus runs share one fixture: the first test waits


# --- simulated recordings ----------------------------------------------------------------------
def simulate(
    world: int,
    *,
    steps: int = 8,
    global_batch: int = 8,
    dataset: int = 16,
    per_rank_batch: int | None = None,
    same_on_every_rank: bool = False,
    reshuffle: bool = True,
    lr: float = 0.1,
    loss_factor: float = 1.0,
    batchnorm: tuple[str, ...] = (),
    drift: float = 0.0,
    noise: float = 1e-7,
    skipped: tuple[int, ...] = (),
    label: str = "",
    sampler: str = "DistributedSampler",
) -> cli.Run:
    """An ideal DDP run (global order sharded as DistributedSampler does) with one culprit."""
    per_rank = per_rank_batch or global_batch // world
    per_epoch = dataset // (per_rank * world)
    orders = [
        random.Random(e if reshuffle else 0).sample(range(dataset), dataset) for e in range(9)
    ]
    ranks = []
    for rank in range(world):
        rec = RankRecord(rank, world, "run-1", "train.py")
        rec.loaders.append(Loader(0, "train.py:12", per_rank, sampler, True, False, False))
        rec.batchnorm.extend(batchnorm)
        for index in range(steps):
            epoch, within = divmod(index, per_epoch)
            if within == 0:
                rec.epochs.append(Epoch(0, epoch, epoch if reshuffle else 0, index))
            chunk = orders[epoch][within * per_rank * world : (within + 1) * per_rank * world]
            mine = chunk[:per_rank] if same_on_every_rank else chunk[rank::world]
            loss = (1.0 + 0.1 * index) * loss_factor + drift * index + noise * rank
            rec.steps.append(
                RankStep(
                    step=index,
                    samples=mine,
                    batch=len(mine),
                    loss=loss,
                    backwards=1,
                    grad_norm=None if index in skipped else 2.0 * loss_factor + drift * index,
                    lr=[lr],
                    param_norm=3.0 + drift * index,
                    skipped=index in skipped,
                    loaders=[[0, epoch]],
                )
            )
        ranks.append(rec)
    return merge(ranks, label or f"{world} process" + ("" if world == 1 else "es"))


def test_equivalent_runs_report_the_largest_loss_difference() -> None:
    verdict = judge(simulate(1), simulate(2, noise=6e-6))
    assert verdict.equivalent
    assert verdict.lines[0] == (
        "equivalent: max |loss difference| 3e-6 over 8 steps, identical sample sets in every step"
    )
    assert judge(simulate(1), simulate(4)).equivalent


def test_global_batch_names_the_dataloader_line_and_the_per_process_batch() -> None:
    verdict = judge(simulate(1), simulate(2, per_rank_batch=8, dataset=32))
    assert not verdict.equivalent and verdict.step == 0
    assert verdict.lines[0] == "not equivalent: global batch 8 vs 16 at step 0"
    assert "the DataLoader at train.py:12 (batch_size=8)" in verdict.lines[3]
    assert "it must be 8 / 2 = 4" in verdict.lines[3]


def test_same_samples_on_every_rank_is_a_defect_of_the_run() -> None:
    verdict = judge(simulate(1), simulate(2, same_on_every_rank=True, sampler="RandomSampler"))
    assert verdict.step == 0
    assert "every rank of the run on 2 processes consumed the same 4 samples" in verdict.lines[0]
    assert "the data is not sharded" in verdict.lines[0]
    assert "DistributedSampler" in verdict.lines[2]


def test_repeated_epoch_order_is_reported_at_the_first_step_of_the_second_epoch() -> None:
    verdict = judge(simulate(1, reshuffle=False), simulate(2, reshuffle=False))
    assert not verdict.equivalent and verdict.step == 2  # 16 samples, batch 8: epoch 1 at step 2
    assert verdict.lines[0].endswith("repeats the previous epoch's sample order: set_epoch missing")
    assert any("its epoch stayed 0" in line for line in verdict.lines)


def test_a_sampler_that_does_not_shuffle_may_repeat_its_order() -> None:
    a, b = simulate(1, reshuffle=False), simulate(2, reshuffle=False)
    for run_ in (a, b):
        run_.loaders = [Loader(0, "train.py:12", 4, "SequentialSampler", False, False)]
    assert judge(a, b).equivalent


def test_learning_rate_scaled_with_the_world_size() -> None:
    verdict = judge(simulate(1), simulate(2, lr=0.2))
    assert verdict.lines[0] == (
        "not equivalent: learning rate 0.1 vs 0.2 (param group 0) at step 0"
    )
    assert "scaled with the world size (x2)" in verdict.lines[1]


def test_gradient_norm_off_by_the_world_size_factor() -> None:
    verdict = judge(simulate(1), simulate(2, loss_factor=0.5))
    assert verdict.step == 0
    assert "gradient norm off by the world-size factor" in verdict.lines[0]
    assert "loss divided by the world size" in verdict.lines[0]
    sizes = {"dataset": 24, "global_batch": 12}
    verdict = judge(simulate(1, **sizes), simulate(3, loss_factor=1 / 3, **sizes))
    assert "world-size factor at step 0 (3x)" in verdict.lines[0]


def test_drift_with_batchnorm_suggests_syncbatchnorm() -> None:
    verdict = judge(simulate(1), simulate(2, drift=0.01, batchnorm=("module.1 (BatchNorm1d)",)))
    assert verdict.step == 1
    assert "BatchNorm statistics are per rank" in verdict.lines[0]
    assert any("SyncBatchNorm" in line and "module.1" in line for line in verdict.lines)


def test_drift_without_evidence_says_what_to_look_for() -> None:
    verdict = judge(simulate(1), simulate(2, drift=0.01))
    assert verdict.lines[0].startswith("not equivalent: loss, gradient norm, parameters differ")
    assert "rank-dependent randomness" in verdict.lines[-1]


def test_tolerance_decides_what_is_noise() -> None:
    assert not judge(simulate(1), simulate(2, noise=1e-3), rtol=1e-4).equivalent
    assert judge(simulate(1), simulate(2, noise=1e-3), rtol=1e-2).equivalent


def test_skipped_steps_are_shown_and_compared() -> None:
    verdict = judge(simulate(1, skipped=(0,)), simulate(2, skipped=(0,)))
    assert verdict.equivalent
    assert "GradScaler skipped step 0 in both runs" in verdict.lines[1]
    verdict = judge(simulate(1, skipped=(0,)), simulate(2))
    assert verdict.lines[0] == (
        "not equivalent: GradScaler skipped step 0 in the run on 1 process only"
    )


def test_step_counts_differ_only_when_a_script_ended_early() -> None:
    short, full = simulate(2, steps=4), simulate(1, steps=8)
    assert judge(full, short).lines[0] == (
        "not equivalent: the run on 1 process recorded 8 steps, the run on 2 processes 4"
    )
    short.limited = True  # stopped by the step limit: the steps it has are compared
    assert judge(full, short).equivalent


def test_padding_duplicates_explain_different_samples() -> None:
    b = simulate(2)
    first = b.steps[0]
    padded = (first.per_rank[0], (*first.per_rank[1][:3], first.per_rank[0][0]))
    samples = tuple(sorted(padded[0] + padded[1]))
    b.steps[0] = replace(first, per_rank=padded, samples=samples)
    verdict = judge(simulate(1), b)
    assert "consumed different samples" in verdict.lines[0]
    assert "pads the data by repeating samples" in verdict.lines[1]


def test_unknown_samples_compare_batch_sizes_only() -> None:
    a, b = simulate(1), simulate(2)
    for run_ in (a, b):
        run_.steps = [replace(s, samples=None) for s in run_.steps]
    verdict = judge(a, b)
    assert verdict.equivalent and "samples unknown" in verdict.lines[0]
    assert "batch sizes agree" in verdict.lines[0]


def _unknown(run_: cli.Run) -> cli.Run:
    """``run_`` as recorded without DataLoader batches nor model inputs."""
    run_.steps = [
        replace(s, samples=None, batch=None, per_rank_batch=(None,) * len(s.per_rank), loaders=())
        for s in run_.steps
    ]
    return run_


def _by_content(run_: cli.Run, offset: int = 0) -> cli.Run:
    """``run_`` with its samples known only by the digests of the rows entering the model."""
    run_ = _unknown(run_)
    for i, step in enumerate(run_.steps):
        per_rank = tuple(tuple(x + offset for x in p or ()) for p in step.per_rank)
        digests = tuple(sorted(x for p in per_rank for x in p))
        run_.steps[i] = replace(step, digests=digests, per_rank_digests=per_rank)
    return run_


def test_what_was_not_recorded_is_said_to_be_unknown() -> None:
    verdict = judge(_unknown(simulate(1)), _unknown(simulate(2, drift=0.01)))
    assert verdict.lines[0] == (
        "not equivalent: loss, gradient norm, parameters differ at step 1 with the same "
        "learning rate (samples and global batch unknown)"
    )
    verdict = judge(_by_content(simulate(1)), _by_content(simulate(2, drift=0.01)))
    assert verdict.lines[0].endswith("with the same samples, global batch and learning rate")


def test_samples_known_by_content_only() -> None:
    assert (
        judge(_by_content(simulate(1)), _by_content(simulate(2)))
        .lines[0]
        .endswith("identical sample sets in every step (by content)")
    )
    verdict = judge(_by_content(simulate(1)), _by_content(simulate(2), offset=100))
    assert verdict.lines[0] == (
        "not equivalent: step 0 consumed different samples (8 of 8 differ; global batch 8 in both)"
    )
    assert "content of the rows entering the model" in verdict.lines[1]
    assert "a seed of its own" in verdict.lines[2]
    verdict = judge(_by_content(simulate(1)), _by_content(simulate(2, same_on_every_rank=True)))
    assert "consumed the same 4 input rows (by content) in step 0" in verdict.lines[0]


def test_same_dataset_samples_with_other_inputs() -> None:
    """Same indices, other rows by content: a cause where the losses differ, a note where they
    agree (features computed at another batch size differ in the last bits)."""

    def runs(**b: float) -> tuple[cli.Run, cli.Run]:
        a, other = _by_content(simulate(1)), _by_content(simulate(2, **b), offset=100)
        for run_, plain in ((a, simulate(1)), (other, simulate(2, **b))):
            run_.steps = [
                replace(s, samples=p.samples, per_rank=p.per_rank, batch=p.batch)
                for s, p in zip(run_.steps, plain.steps, strict=True)
            ]
        return a, other

    verdict = judge(*runs(loss_factor=1.5))
    assert verdict.lines[0] == (
        "not equivalent: step 0 took the same dataset samples, but 8 of 8 rows entering the "
        "model differ"
    )
    assert "a dataset built from random numbers, or a random augmentation" in verdict.lines[1]
    verdict = judge(*runs())
    assert verdict.equivalent and verdict.lines[0].endswith("identical sample sets in every step")
    assert verdict.lines[1].startswith("note: from step 0 the same dataset samples entered")


def test_the_certain_cause_in_the_table_comes_first() -> None:
    unsharded = simulate(2, per_rank_batch=8, dataset=32, same_on_every_rank=True)
    verdict = judge(simulate(1), unsharded)
    assert verdict.lines[0] == "not equivalent: global batch 8 vs 16 at step 0"
    assert any(line.startswith("also: every rank of the run on 2") for line in verdict.lines)


def test_a_loss_that_cannot_differ_is_inconclusive(capsys: pytest.CaptureFixture[str]) -> None:
    runs = [simulate(1, loss_factor=0.0, noise=0.0), simulate(2, loss_factor=0.0, noise=0.0)]
    verdict = judge(*runs)
    assert not verdict.equivalent and verdict.inconclusive
    assert verdict.lines[0].startswith(
        "inconclusive: the loss is 0 at every step and the gradients are 0 at every step"
    )
    assert cli.report(runs, DEFAULT_RTOL) == cli.INCONCLUSIVE == 3
    capsys.readouterr()
    # a certain difference stays the verdict; the vacuity is added
    big = simulate(2, per_rank_batch=8, dataset=32, loss_factor=0.0, noise=0.0)
    verdict = judge(runs[0], big)
    assert verdict.lines[0] == "not equivalent: global batch 8 vs 16 at step 0"
    assert verdict.lines[-1].startswith("also: the loss is 0 at every step")


def test_learning_rates_of_several_groups_stay_readable() -> None:
    from guards.compare.render import lr_cell, lr_groups, table

    assert lr_cell((0.1, 0.1)) == "0.1"
    assert lr_cell((0.1, 0.01, 0.001)) == "3 groups: 0.1,0.01,..."
    a = simulate(1)
    a.steps = [replace(s, lr=(0.1, 0.01, 0.001)) for s in a.steps]
    rows = table([a, simulate(2)], {})
    assert rows[1].endswith("3 groups: 0.1,0.01,... / 0.1")
    assert lr_groups([a, simulate(2)]) == ["lr A per param group from step 0: 0.1, 0.01, 0.001"]


def test_row_digests_identify_rows_at_any_batch_size() -> None:
    torch = pytest.importorskip("torch")
    from guards.compare.digests import SAMPLED, call_digests, row_digests

    x = torch.randn(6, 3, 5)
    whole = row_digests(x).tolist()
    assert row_digests(x[2:4]).tolist() == whole[2:4]
    assert len(set(whole)) == 6
    assert row_digests(x.flip(-1)).tolist() != whole  # a flipped sample is another input
    tokens = torch.randint(50, (4, 16))
    assert row_digests(tokens.roll(1, dims=1)).tolist() != row_digests(tokens).tolist()
    wide = torch.zeros(2, SAMPLED * 3)
    changed = wide.clone()
    changed[1, 1] = 1.0  # a word the weighted sum skips
    if hasattr(torch, "hash_tensor"):
        assert row_digests(changed).tolist()[1] != row_digests(wide).tolist()[1]
    both = call_digests((x, torch.arange(6)), {"mask": torch.ones(2)})
    assert both is not None and both.shape == (6,)
    assert call_digests((), {"flag": True}) is None
    activations = torch.nn.Linear(5, 2)(x)  # one model's output given to another: no data
    assert call_digests((activations,), {}) is None


def replace_steps(run_: cli.Run, count: int) -> cli.Run:
    return replace(run_, steps=run_.steps[:count])


def test_a_peeked_batch_and_an_evaluation_pass_are_no_training(tmp_path: Path) -> None:
    """The DDP tutorial's ``len(next(iter(loader))[0])`` before ``set_epoch``, and an evaluation
    loop: neither is a step nor an epoch; a batch taken with ``next(iter(loader))`` and trained
    on is."""
    torch = pytest.importorskip("torch")
    from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

    from guards.compare import hooks, recorder

    torch.manual_seed(0)
    data = TensorDataset(torch.randn(16, 3), torch.randn(16, 1))
    sampler = DistributedSampler(data, num_replicas=1, rank=0, seed=1)
    loader = DataLoader(data, batch_size=4, sampler=sampler)
    held_out = DataLoader(data, batch_size=8)
    model, criterion = torch.nn.Linear(3, 1), torch.nn.MSELoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    rec = recorder.Recorder(tmp_path, None, 0, 1, "r", "t.py")
    patches = hooks.install(rec)
    try:

        def train(x: object, y: object) -> None:
            optimizer.zero_grad()
            criterion(model(x), y).backward()  # a loss module: no model, its input no data
            optimizer.step()

        for epoch in range(3):
            assert len(next(iter(loader))[0]) == 4
            sampler.set_epoch(epoch)
            for x, y in loader:
                train(x, y)
            with torch.no_grad():
                for x, _ in held_out:
                    model(x)
        for _ in range(2):
            train(*next(iter(loader)))
    finally:
        patches.remove()
        rec.close()
    run_ = merge(read_ranks(tmp_path), "1 process")
    assert len(run_.steps) == 14
    assert all(s.batch == 4 and s.rows == 4 for s in run_.steps)
    order = list(DistributedSampler(data, num_replicas=1, rank=0, seed=1))  # epoch 0
    assert [s.per_rank[0] for s in run_.steps[:4]] == [
        tuple(order[i : i + 4]) for i in range(0, 16, 4)
    ]
    trained = {tuple(s.loaders) for s in run_.steps[:12]}
    assert trained == {((0, 1),), ((0, 3),), ((0, 5),)}  # iterations 0, 2, 4 were peeks
    assert [s.loaders for s in run_.steps[12:]] == [((0, 6),), ((0, 7),)]
    assert judge(replace_steps(run_, 12), replace_steps(run_, 12)).equivalent
    # the two batches taken with next(iter(loader)) trained: both start epoch 2's order again
    verdict = judge(run_, run_)
    assert verdict.step == 12 and any("its epoch stayed 2" in x for x in verdict.lines)


# --- reading recordings ------------------------------------------------------------------------
def _write(folder: Path, rank: int, world: int, run_id: str, extra: str = "") -> None:
    folder.mkdir(parents=True, exist_ok=True)
    head = {"kind": "run", "format": 1, "rank": rank, "world_size": world, "run_id": run_id}
    step = {
        "kind": "step",
        "step": 0,
        "samples": [rank],
        "batch": 1,
        "loss": 1.0,
        "backwards": 1,
        "grad_norm": 1.0,
        "lr": [0.1],
        "param_norm": 1.0,
    }
    text = json.dumps({**head, "script": "t.py"}) + "\n" + json.dumps(step) + "\n" + extra
    (folder / f"rank{rank}.jsonl").write_text(text)


def test_recordings_are_read_with_their_problems_named(tmp_path: Path) -> None:
    _write(tmp_path / "ok", 0, 2, "x", extra='{"kind": "step", "ste')  # killed mid-line
    _write(tmp_path / "ok", 1, 2, "x")
    assert [len(r.steps) for r in read_ranks(tmp_path / "ok")] == [1, 1]
    _write(tmp_path / "stale", 0, 2, "new")
    _write(tmp_path / "stale", 1, 2, "old")
    with pytest.raises(RecordError, match="left over from another run"):
        read_ranks(tmp_path / "stale")
    _write(tmp_path / "missing", 0, 2, "x")
    with pytest.raises(RecordError, match="rank 1 of 2 recorded nothing"):
        read_ranks(tmp_path / "missing")
    with pytest.raises(RecordError, match="no recording in this folder"):
        read_ranks(tmp_path)


def test_usage_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main([str(tmp_path / "nope.py")]) == 2
    assert "no such script" in capsys.readouterr().err
    assert cli.main([str(tmp_path), str(tmp_path / "x.py")]) == 2
    assert "give two recorded folders" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        cli.main(["--nproc", "2", "train.py"])
    assert exc.value.code == 2
    assert "two or more different counts" in capsys.readouterr().err


def test_two_recorded_folders_compare(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write(tmp_path / "a", 0, 1, "a")
    _write(tmp_path / "b", 0, 1, "b")
    assert cli.main([str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    out = capsys.readouterr().out
    assert "b (1 process) vs a (1 process): equivalent" in out


def test_plot_needs_matplotlib(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(tmp_path / "a", 0, 1, "a")
    monkeypatch.setattr(plot.importlib.util, "find_spec", lambda name: None)
    assert (
        cli.main(["--plot", str(tmp_path / "p.png"), str(tmp_path / "a"), str(tmp_path / "a")]) == 2
    )
    assert "pip install 'ddplint[plot]'" in capsys.readouterr().err
    assert not (tmp_path / "p.png").exists()


def test_plot_carries_the_verdict_the_tolerance_and_the_first_difference(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    runs = [simulate(1), simulate(2, drift=0.01, noise=0.0)]
    verdicts = [judge(*runs)]
    target = tmp_path / "loss.png"
    plot.draw(runs, target, verdicts, DEFAULT_RTOL)
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert plot.title(runs, verdicts).startswith(
        "2 processes vs 1 process: not equivalent: loss, gradient norm, parameters differ at step 1"
    )
    figure = plot.figure(runs, verdicts, DEFAULT_RTOL)
    top, bottom = figure.axes
    assert bottom.get_yscale() == "symlog" and bottom.get_ylim()[0] == 0
    labels = [line.get_label() for line in bottom.get_lines()]
    assert "tolerance (rtol 0.001)" in labels
    marks = [line for line in top.get_lines() if list(line.get_xdata()) == [1, 1]]
    assert marks, "no mark at the first differing step"
    difference = next(x for x in bottom.get_lines() if x.get_label() == "2 processes")
    assert difference.get_ydata()[0] == 0  # step 0 agrees exactly: drawn at 0, not at 1e-12


def test_a_failed_run_shows_the_workers_error_not_torchruns_summary(tmp_path: Path) -> None:
    worker = 'Traceback (most recent call last):\n  File "t.py", line 2\nValueError: bad shard 7\n'
    agent = (
        'Traceback (most recent call last):\n  File "run.py", line 9\n'
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n"
        + "=" * 60
        + "\nRoot Cause (first observed failure):\n"
    )
    (tmp_path / "stderr.txt").write_text(worker + "E1201 failed (exitcode: 1)\n" + agent)
    tail = Launch(2, tmp_path, 1, 1.0).stderr_tail()
    assert tail.endswith("ValueError: bad shard 7\nE1201 failed (exitcode: 1)")
    assert "ChildFailedError" not in tail


def test_recording_is_asked_for_by_option_or_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GUARDS_RECORD", raising=False)
    assert entry._record_folder(["--record", "out", "t.py", "-x"]) == ("out", ["t.py", "-x"])
    assert entry._record_folder(["--record=out", "t.py"]) == ("out", ["t.py"])
    assert entry._record_folder(["t.py"]) == (None, ["t.py"])
    monkeypatch.setenv("GUARDS_RECORD", "env-out")
    assert entry._record_folder(["t.py"]) == ("env-out", ["t.py"])
    with pytest.raises(SystemExit, match="--record needs a folder"):
        entry._record_folder(["--record"])
    monkeypatch.setenv("GUARDS_RECORD_STEPS", "0")
    with pytest.raises(SystemExit, match="GUARDS_RECORD_STEPS='0'"):
        entry._step_limit()


# --- the recorder, in this process (no hooks installed) ----------------------------------------
def test_recorder_fails_open(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    torch = pytest.importorskip("torch")
    from guards.compare.recorder import Recorder

    rec = Recorder(tmp_path, 3, 0, 1, "r", "t.py")
    rec.on_backward(torch.tensor(2.0), False)
    model = torch.nn.Linear(2, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    assert rec.on_post_step(opt) is False
    rec.on_backward("not a tensor", False)  # type: ignore[arg-type]
    assert not rec.active
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "recording is off for this run" in err
    assert rec.on_post_step(opt) is False  # off: never stops the run
    rec.close()
    (record,) = read_ranks(tmp_path)
    assert [s.loss for s in record.steps] == [2.0]
    assert any("recording failed in on_backward" in n for n in record.notes)


# --- the corpus, recorded ---------------------------------------------------------------------
# Torch imports are most of this file's cost, so the scripts run in few processes: `guards
# compare` runs correct.py on 1 and 3 processes end to end (torchrun, recording, the verdict), and
# compare_record_many.py records every other script with the same recorder and hooks, several
# scripts per process, at 2 processes and, where a script has its own reference, at 1. The
# culprits whose 1-process run is correct.py's (same data, model, seed and sampler at world size 1)
# are compared with correct.py's 1-process recording.
STEPS = 20
TWO = [
    "correct.py",
    "correct.py:--no-shuffle",
    "batch_unchanged.py",
    "no_sampler.py",
    "no_set_epoch.py",
    "lr_scaled.py",
    "loss_divided.py",
    "batchnorm.py",
    "accumulate_amp.py",
    "peek_epoch.py",
    "peek_epoch.py:--undivided",
    "gpt_windows.py",
    "gpt_windows.py:--same-seed",
    "vacuous.py",
]
ONE = [
    "single_process.py",
    "no_set_epoch.py",
    "batchnorm.py",
    "accumulate_amp.py",
    "peek_epoch.py",
    "gpt_windows.py",
    "vacuous.py",
]
REFERENCE = {"no_set_epoch": "no_set_epoch-1", "batchnorm": "batchnorm-1",
             "accumulate_amp": "accumulate_amp-1", "peek_epoch-undivided": "peek_epoch-1",
             "gpt_windows": "gpt_windows-1", "gpt_windows-same-seed": "gpt_windows-1"}  # fmt: skip


def _compare(*args: str) -> list[str]:
    return [sys.executable, "-m", "guards", "compare", "--timeout", "170", *args]


def _record_many(world: int, folder: Path, scripts: list[str]) -> list[str]:
    driver = str(REPO / "tests" / "compare_record_many.py")
    return [sys.executable, driver, str(world), str(STEPS), str(folder), *scripts]


@dataclass
class Corpus:
    base: Path  # the recordings kept
    runs: dict[str, Future[Run]]


@pytest.fixture(scope="module")
def corpus_runs(tmp_path_factory: pytest.TempPathFactory) -> Corpus:
    """Every corpus run, started at once, three at a time, each with a hard timeout."""
    base = tmp_path_factory.mktemp("compare")
    env = environment()
    failing = base / "failing.py"
    failing.write_text("raise ValueError('bad shard 7')\n")
    jobs: dict[str, list[str]] = {
        "correct": _compare("--nproc", "1,3", "--keep", str(base / "correct"), "correct.py"),
        "two": _record_many(2, base / "recorded", TWO),
        "one": _record_many(1, base / "recorded", ONE),
        "failing": _compare("--keep", str(base / "failing"), str(failing)),
    }
    pool = ThreadPoolExecutor(max_workers=3)
    futures = {name: pool.submit(run, cmd, env, CORPUS, 300) for name, cmd in jobs.items()}
    pool.shutdown(wait=False)
    return Corpus(base, futures)


def _done(corpus: Corpus, name: str) -> Run:
    result = corpus.runs[name].result(timeout=900)
    detail = f"\n--- stdout\n{result.stdout[-4000:]}\n--- stderr\n{result.stderr[-3000:]}"
    assert result.returncode is not None, "timed out" + detail
    assert result.survivors == [], f"processes left behind: {result.survivors}" + detail
    left = stragglers(corpus.base / name)  # torchrun's workers live in sessions of their own
    assert left == [], f"workers left behind: {left}" + detail
    return result


def _recorded(corpus: Corpus, folder: str) -> Path:
    """A run recorded by compare_record_many.py (both launches finished cleanly)."""
    for name in ("two", "one") if folder.endswith("-1") else ("two",):
        result = _done(corpus, name)
        assert result.returncode == 0, result.stdout + result.stderr
    return corpus.base / "recorded" / folder


def _versus(reference: Path, other: Path, capsys) -> tuple[int, str]:
    """`guards compare`'s report and exit status for two recordings, named by process count
    as when it runs the script itself."""
    runs = [load_run(folder) for folder in (reference, other)]
    for recorded in runs:
        recorded.label = recorded.processes()
    status = cli.report(runs, DEFAULT_RTOL)
    return status, capsys.readouterr().out


def _line(script: str, tag: str) -> int:
    for number, text in enumerate((CORPUS / script).read_text().splitlines(), 1):
        if f"line:{tag}" in text:
            return number
    raise AssertionError(f"no line:{tag} in {script}")


def _correct_n1(corpus: Corpus) -> Path:
    result = _done(corpus, "correct")
    assert result.returncode == 0, result.stdout + result.stderr
    return corpus.base / "correct" / "n1"


EQUIVALENT = (r"{n} processes vs 1 process: equivalent: max \|loss difference\| \de-\d+ over 20 "
              r"steps, identical sample sets in every step")  # fmt: skip


def test_correct_conversion_is_equivalent_at_2_and_3_processes(corpus_runs, capsys) -> None:
    result = _done(corpus_runs, "correct")
    assert result.returncode == 0, result.stdout + result.stderr
    line = next(x for x in result.stdout.splitlines() if x.startswith("3 processes vs"))
    assert re.fullmatch(EQUIVALENT.format(n=3), line), line
    status, out = _versus(_correct_n1(corpus_runs), _recorded(corpus_runs, "correct-2"), capsys)
    assert status == 0, out
    line = next(x for x in out.splitlines() if x.startswith("2 processes vs"))
    assert re.fullmatch(EQUIVALENT.format(n=2), line), line


CULPRITS = [
    ("batch_unchanged", 0, "not equivalent: global batch 24 vs 48 at step 0",
     "the per-process batch is set by the DataLoader at batch_unchanged.py:{batch} "
     "(batch_size=24); for a global batch of 24 with 2 processes it must be 24 / 2 = 12"),
    ("no_sampler", 0, "every rank of the run on 2 processes consumed the same 12 samples in "
     "step 0: the data is not sharded", "no_sampler.py:{loader} (RandomSampler)"),
    ("no_set_epoch", 4, "step 4 of the run on 1 process repeats the previous epoch's sample "
     "order: set_epoch missing", "its epoch stayed 0: sampler.set_epoch(epoch) is never called"),
    ("lr_scaled", 0, "not equivalent: learning rate 0.1 vs 0.2 (param group 0) at step 0",
     "it was scaled with the world size (x2)"),
    ("loss_divided", 0, "not equivalent: gradient norm off by the world-size factor at step 0 "
     "(2x): loss divided by the world size", "the loss is divided by the world size before "
     "backward()"),
    ("batchnorm", 0, "BatchNorm statistics are per rank", "SyncBatchNorm: module.1 (BatchNorm1d)"),
    ("peek_epoch-undivided", 0, "not equivalent: global batch 24 vs 48 at step 0",
     "the per-process batch is set by the DataLoader at peek_epoch.py:{batch} (batch_size=24)"),
    ("gpt_windows", 0, "not equivalent: step 0 consumed different samples (",
     " of 32 differ; global batch 32 in both)\n  samples told apart by the content of the rows"),
    ("gpt_windows-same-seed", 0, "every rank of the run on 2 processes consumed the same 16 "
     "input rows (by content) in step 0: the data is not sharded", "give each rank its own part"),
]  # fmt: skip


@pytest.mark.parametrize(("script", "step", "headline", "evidence"), CULPRITS)
def test_culprit_is_named_at_its_step(
    corpus_runs, capsys, script, step, headline, evidence
) -> None:
    other = _recorded(corpus_runs, f"{script}-2")
    if script in REFERENCE:
        reference = _recorded(corpus_runs, REFERENCE[script])
    else:
        reference = _correct_n1(corpus_runs)
    script = script.split("-")[0]  # the recording of `peek_epoch.py --undivided`: peek_epoch.py
    status, out = _versus(reference, other, capsys)
    assert status == 1, out
    tags = {
        t: _line(f"{script}.py", t)
        for t in ("batch", "loader")
        if f"line:{t}" in (CORPUS / f"{script}.py").read_text()
    }
    verdict = out.split("\n\n", 1)[1]
    assert headline in verdict, out
    assert evidence.format(**tags) in verdict, out
    marked = [x for x in out.splitlines() if x.lstrip().startswith(">")]
    assert marked and marked[0].split()[0] == f">{step}", out


def test_a_peek_before_set_epoch_is_no_epoch(corpus_runs, capsys) -> None:
    reference = _recorded(corpus_runs, "peek_epoch-1")
    status, out = _versus(reference, _recorded(corpus_runs, "peek_epoch-2"), capsys)
    assert status == 0, out
    line = next(x for x in out.splitlines() if x.startswith("2 processes vs"))
    assert re.fullmatch(EQUIVALENT.format(n=2), line), line
    status, out = _versus(reference, _recorded(corpus_runs, "peek_epoch-undivided-2"), capsys)
    assert status == 1 and "set_epoch" not in out, out


def test_random_windows_are_measured_not_assumed(corpus_runs, capsys) -> None:
    status, out = _versus(
        _recorded(corpus_runs, "gpt_windows-1"), _recorded(corpus_runs, "gpt_windows-2"), capsys
    )
    assert status == 1, out
    assert "same samples" not in out and "?" not in out.splitlines()[2], out
    assert out.splitlines()[2].split()[1] == "32/32", out  # the global batch, counted in rows


def test_a_loss_that_is_always_zero_is_inconclusive(corpus_runs, capsys) -> None:
    status, out = _versus(
        _recorded(corpus_runs, "vacuous-1"), _recorded(corpus_runs, "vacuous-2"), capsys
    )
    assert status == 3, out
    assert "2 processes vs 1 process: inconclusive: the loss is 0 at every step and the " in out


def test_no_sync_accumulation_and_skipped_amp_steps(corpus_runs, capsys) -> None:
    reference = _recorded(corpus_runs, "accumulate_amp-1")
    status, out = _versus(reference, _recorded(corpus_runs, "accumulate_amp-2"), capsys)
    assert status == 0, out
    assert "2 processes vs 1 process: equivalent" in out
    assert "GradScaler skipped step 0 in both runs" in out
    assert "each step accumulates 2 backward() calls (micro-steps)" in out
    assert "skipped/skipped" in out.splitlines()[2]


def test_original_single_process_script_against_its_ddp_version(corpus_runs, capsys) -> None:
    single = _recorded(corpus_runs, "single_process-1")
    ddp = _recorded(corpus_runs, "correct-no-shuffle-2")
    assert cli.main([str(single), str(ddp)]) == 0
    out = capsys.readouterr().out
    assert "correct-no-shuffle-2 (2 processes) vs single_process-1 (1 process): equivalent" in out
    # the shuffled DDP run draws another order: the samplers are named
    assert cli.main([str(single), str(_recorded(corpus_runs, "correct-2"))]) == 1
    out = capsys.readouterr().out
    assert "step 0 consumed different samples" in out
    assert f"single_process.py:{_line('single_process.py', 'loader')} (SequentialSampler)" in out
    assert f"correct.py:{_line('correct.py', 'loader')} (DistributedSampler)" in out


def test_a_failed_run_exits_2_with_its_error(corpus_runs: Corpus) -> None:
    result = _done(corpus_runs, "failing")
    assert result.returncode == 2, result.stdout + result.stderr
    assert "guards compare: error: the run on 1 process exited with status 1" in result.stderr
    assert "ValueError: bad shard 7" in result.stderr
    assert "on 1 process (20 steps)" in result.stderr
    assert "on 2 processes (20 steps)" not in result.stderr  # it stopped at the first failure


def test_recorded_values_are_those_of_the_training(tmp_path: Path) -> None:
    """Across a flush: the loss, the gradient norm the optimizer used, the parameter norm after
    the step and each group's learning rate (a tensor one too) are the training's own, and the
    training itself is not changed (gradient mode, parameters)."""
    torch = pytest.importorskip("torch")
    from guards.compare import hooks, recorder

    def train(record: bool) -> tuple[list[tuple[float, ...]], list[object]]:
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
        groups = [{"params": model[0].parameters()}, {"params": model[2].parameters()}]
        optimizer = torch.optim.SGD(groups, lr=torch.tensor(0.1), momentum=0.9)
        rec = recorder.Recorder(tmp_path, None, 0, 1, "r", "t.py")
        patches = hooks.install(rec) if record else None
        expected = []
        for step in range(recorder.FLUSH_EVERY + 3):
            optimizer.param_groups[1]["lr"] = 0.01 * (1 + step % 7)
            optimizer.param_groups[0]["lr"].fill_(0.1 / (step + 1))  # a scheduler, in place
            loss = model(torch.randn(5, 4)).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            grads = torch.cat([p.grad.flatten() for p in model.parameters()])
            optimizer.step()
            params = torch.cat([p.detach().flatten() for p in model.parameters()])
            lrs = (0.1 / (step + 1), 0.01 * (1 + step % 7))
            expected.append((loss.item(), float(grads.norm()), float(params.norm()), *lrs))
            assert torch.is_grad_enabled()
        if patches is not None:
            patches.remove()
        rec.close()
        return expected, [p.detach().clone() for p in model.parameters()]

    plain, plain_params = train(record=False)
    expected, params = train(record=True)
    assert expected == plain
    assert all(torch.equal(a, b) for a, b in zip(plain_params, params, strict=True))
    (record,) = read_ranks(tmp_path)
    got = [(s.loss, s.grad_norm, s.param_norm, *s.lr) for s in record.steps]
    assert len(got) == len(expected) == recorder.FLUSH_EVERY + 3
    assert [x for step in got for x in step] == pytest.approx(
        [x for step in expected for x in step], rel=1e-5
    )


def test_the_real_world_set_is_patches_and_a_manifest_only() -> None:
    """bench/compare_realworld keeps no third-party file: patches, the manifest, our runner."""
    import importlib.util

    folder = REPO / "bench" / "compare_realworld"
    spec = importlib.util.spec_from_file_location("compare_realworld_run", folder / "run.py")
    assert spec is not None and spec.loader is not None
    realworld = sys.modules[spec.name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(realworld)
    cases = realworld.load()
    assert {c.name for c in cases} >= {"ddp-tutorial", "nanogpt", "imagenet"}
    for case in cases:
        assert len(case.commit) == 40 and case.status in (0, 1, 3), case.name
        for patch in case.patches:
            text = (folder / patch).read_text()
            assert text.startswith("diff --git a/"), patch
            assert all(line.startswith(("diff ", "--- ", "+++ ", "@@ ", " ", "+", "-"))
                       for line in text.splitlines()), patch  # fmt: skip

"""The agent's decisions without processes: when a finished rank waits, leaves or ends a job,
which evidence a verdict prefers, slow-rank warnings, activation, process-tree cleanup."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from guards import started_by_torchrun
from guards.agent import config, report
from guards.agent.cleanup import descendants
from guards.judge import verdict
from guards.protocol.messages import (
    Blocked,
    Entry,
    Exited,
    Failed,
    GroupSummary,
    Mismatch,
    Ok,
    Place,
    State,
    Stranded,
    Summary,
    Wait,
)

AT_RECV = Place(3.0, 2.5, "recv", ["train.py:40 in <module>: recv"])
AT_BUSY = Place(6.0, 0.0, "", ["train.py:30 in save: write()"])


def _summary(rank: int, n: int, *, st: State = State.RUN, wait=None, fp=None, at=None) -> Summary:
    """A summary of ``n`` matching collectives; ``fp`` replaces the last one's fingerprint."""
    rows = [Entry(seq, 100 + seq, "all_reduce", "", f"t.py:{seq}") for seq in range(n)]
    if fp is not None:
        rows[-1] = rows[-1]._replace(fingerprint=fp)
    group = GroupSummary(None, n, Wait(*wait) if wait else None, rows[-8:])
    return Summary(rank, st, 1, {"WORLD": group}, {}, at)


def _departure(summaries: dict, *, fresh=None, gone=frozenset()) -> str | Stranded:
    fresh = set(summaries) if fresh is None else fresh
    return verdict.departure(summaries, fresh, 1, len(summaries), set(gone), 2.0, 5.0)


# --- a rank that finished its script ---------------------------------------------------------
def test_finished_rank_waits_while_a_peer_makes_recorded_progress_or_waits_in_one() -> None:
    progressing = _summary(0, 3, at=None)  # no "at": it issued a collective within a second
    assert _departure({0: progressing, 1: _summary(1, 3, st=State.FIN)}) == "wait"
    waiting = _summary(0, 4, wait=[3, 9.0], at=None)
    assert _departure({0: waiting, 1: _summary(1, 3, st=State.FIN)}) == "wait"


def test_finished_rank_ends_the_job_when_every_running_peer_is_blocked_in_an_unseen_call() -> None:
    found = _departure({0: _summary(0, 1, at=AT_RECV), 1: _summary(1, 1, st=State.FIN)})
    assert isinstance(found, Stranded)
    assert found.blocked == [Blocked(0, "recv", AT_RECV.stack, 2.5)]
    found.done[0].script = "train.py"
    text = "\n".join(report.describe(found, {}))
    assert "rank 1 finished its script train.py (after 1 on WORLD" in text
    assert "while rank 0 is still running" in text
    assert "rank 0 is at train.py:40 in <module>: recv" in text
    assert "blocked for 2.5 s inside torch's recv" in text


def test_finished_rank_leaves_a_busy_peer_alone_as_without_the_guard() -> None:
    summaries = {0: _summary(0, 1, at=AT_BUSY), 1: _summary(1, 1, st=State.FIN)}
    assert _departure(summaries) == "leave"
    # a peer blocked in recv while another computes may be answered by that one: no verdict
    three = {0: _summary(0, 1, at=AT_RECV), 1: _summary(1, 1, st=State.FIN), 2: _summary(2, 1)}
    three[2].at = AT_BUSY
    assert verdict.departure(three, {0, 1, 2}, 1, 3, set(), 2.0, 5.0) in ("wait", "leave")


def test_finished_rank_judges_only_news_published_after_it_finished() -> None:
    summaries = {0: _summary(0, 1, at=AT_RECV), 1: _summary(1, 1, st=State.FIN)}
    assert _departure(summaries, fresh={1}) == "wait"
    assert _departure(summaries, fresh={1}, gone={0}) == "leave"  # dead or silent peers


# --- evidence first ----------------------------------------------------------------------------
def test_a_mismatch_outranks_a_vanished_process() -> None:
    summaries = {
        0: _summary(0, 2, wait=[1, 0.2], fp=1),  # aborted by gloo inside the call
        1: _summary(1, 2, wait=[1, 0.2], fp=2),
        2: _summary(2, 2, wait=[1, 0.2], fp=3),
    }
    found = verdict.analyze(summaries, 3, 60.0, {0})
    assert isinstance(found, Mismatch)


def test_a_dead_process_is_reported_once_someone_needs_it() -> None:
    quiet = {0: _summary(0, 2), 1: _summary(1, 2)}
    assert verdict.analyze(quiet, 2, 60.0, {1}) is None  # nobody waits for it (yet)
    waiting = {0: _summary(0, 3, wait=[2, 0.5]), 1: _summary(1, 2)}
    found = verdict.analyze(waiting, 2, 60.0, {1})
    assert found is not None and (found.kind.value, found.rank, found.count) == ("vanished", 1, 2)


def test_os_exit_zero_after_matched_collectives_is_a_clean_finish() -> None:
    summaries = {0: _summary(0, 4, st=State.FIN), 1: _summary(1, 4, st=State.FIN)}
    assert verdict.analyze(summaries, 2, 60.0, {1}) == Ok()


# --- slow ranks --------------------------------------------------------------------------------
def test_slow_rank_gets_a_warning_with_its_stack_and_no_stop() -> None:
    at = Place(12.0, 0.0, "", ["eval.py:9 in evaluate: model(x)"])
    summaries = {0: _summary(0, 1, at=at), 1: _summary(1, 2, wait=[1, 12.0])}
    assert verdict.analyze(summaries, 2, 1800.0) is None
    assert verdict.slow(summaries, 2, 20.0) is None
    found = verdict.slow(summaries, 2, 10.0)
    assert found is not None and found.seq == 1
    lines = report.warning(found, 1800.0)
    assert lines[0].startswith("[guards] warning: rank 1 waits on WORLD")
    assert "[guards]     eval.py:9 in evaluate: model(x)" in lines
    assert "stops it if the wait reaches 1800 s" in lines[-1]
    hang = verdict.analyze(summaries, 2, 11.0)
    assert hang is not None and hang.kind.value == "hang"


# --- configuration and activation --------------------------------------------------------------
def test_hang_defaults_warn_at_300_s_and_stop_at_the_process_groups_timeout() -> None:
    cfg = config.load({})
    assert (cfg.hang_warn, cfg.hang_timeout) == (300.0, None)
    cfg = config.load({"GUARDS_HANG_WARN": "10", "GUARDS_HANG_TIMEOUT": "3"})
    assert (cfg.hang_warn, cfg.hang_timeout) == (10.0, 3.0)
    with pytest.warns(RuntimeWarning, match="GUARDS_HANG_TIMEOUT"):
        assert config.load({"GUARDS_HANG_TIMEOUT": "soon"}).hang_timeout is None


def test_torchrun_environment_is_recognised() -> None:
    assert started_by_torchrun({"TORCHELASTIC_RUN_ID": "abc"})
    assert started_by_torchrun({"LOCAL_RANK": "0", "WORLD_SIZE": "2", "MASTER_ADDR": "h"})
    assert not started_by_torchrun({"WORLD_SIZE": "2", "MASTER_ADDR": "h"})
    assert not started_by_torchrun({})


# --- process tree ------------------------------------------------------------------------------
@pytest.mark.timeout(60)
def test_descendants_include_grandchildren() -> None:
    code = "import subprocess, time; subprocess.Popen(['sleep', '60']); time.sleep(60)"
    parent = subprocess.Popen([sys.executable, "-c", code])
    try:
        deadline = time.monotonic() + 30
        found: list[int] = []
        while time.monotonic() < deadline and len(found) < 1:
            found = descendants(parent.pid)
            time.sleep(0.05)
        assert len(found) == 1
        assert Path(f"/proc/{found[0]}/cmdline").read_text().startswith("sleep")
    finally:
        for pid in descendants(parent.pid):
            subprocess.run(["kill", "-9", str(pid)], check=False)
        parent.kill()
        parent.wait()


# --- SIGTERM -----------------------------------------------------------------------------------
_FORK_THEN_TERM = """
import os, signal, time
from guards.agent.signals import TermHandler
fired = []
TermHandler(lambda deadline: fired.append(deadline)).install()
child = os.fork()
if child == 0:
    time.sleep(30)
    os._exit(0)
time.sleep(0.3)
os.kill(child, signal.SIGTERM)
_, status = os.waitpid(child, 0)
time.sleep(0.5)
print("child", os.WTERMSIG(status) if os.WIFSIGNALED(status) else None, "fired", len(fired))
os.kill(os.getpid(), signal.SIGTERM)
time.sleep(5)
print("still alive")
"""


def _run_script(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=50,
        cwd=Path(__file__).resolve().parents[1],
    )


@pytest.mark.timeout(60)
def test_sigterm_of_a_forked_child_stays_with_the_child_and_ends_the_parent_promptly() -> None:
    result = _run_script(_FORK_THEN_TERM)
    assert "child 15 fired 0" in result.stdout, result.stdout + result.stderr
    assert "still alive" not in result.stdout
    assert result.returncode == -15  # ended by SIGTERM, as without the guard


@pytest.mark.timeout(60)
def test_sigterm_of_a_child_killed_before_its_fork_hooks_ran_stays_with_the_child() -> None:
    """On a loaded machine a forked child may not run at once: a signal it gets meanwhile must
    not reach the parent through an inherited wakeup socket."""
    delayed = "os.register_at_fork(after_in_child=lambda: time.sleep(1.0))\n"
    result = _run_script(_FORK_THEN_TERM.replace("from guards", delayed + "from guards", 1))
    assert "child 15 fired 0" in result.stdout, result.stdout + result.stderr
    assert result.returncode == -15


# --- torchrun's root cause -------------------------------------------------------------------
def test_the_failing_ranks_error_file_makes_torchrun_name_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from torch.distributed.elastic.multiprocessing.errors import ChildFailedError, ProcessFailure

    from guards.agent import root_cause

    path = tmp_path / "error.json"
    monkeypatch.setenv("TORCHELASTIC_ERROR_FILE", str(path))
    failed_at = time.time() - 2
    root_cause.write_error_file("ValueError: bad batch", "Traceback ...\n", failed_at)
    root_cause.write_error_file("SystemExit: 3", "", time.time())  # written once, never replaced
    culprit = ProcessFailure(local_rank=1, pid=11, exitcode=1, error_file=str(path))
    assert culprit.timestamp == int(failed_at)
    assert culprit.message["message"] == "ValueError: bad batch"
    # a survivor stopped after it, even one recorded first, is not the root cause
    survivor = ProcessFailure(local_rank=0, pid=10, exitcode=-15, error_file=str(tmp_path / "no"))
    assert ChildFailedError("train.py", {0: survivor, 1: culprit}).get_first_failure()[0] == 1


def test_a_verdict_about_one_ranks_own_end_names_it_and_the_others_say_they_leave_after_it() -> (
    None
):
    from guards.agent import root_cause

    failed = Failed(2, "OutOfMemoryError", "x", "t.py:3")
    assert root_cause.culprit(failed) == 2
    assert root_cause.culprit(Exited(0, 3, "t.py:4")) == 0
    assert root_cause.culprit(Mismatch("WORLD", 1, [])) is None
    lines = report.render(failed, {}, 0, None, after=2, torchrun=True)
    assert lines[-1] == (
        "[guards] rank 0 stops after rank 2 has ended, so that torchrun names rank 2 as the root "
        "cause"
    )
    lines = report.render(failed, {}, 0, None, after=2)
    assert (
        lines[-1]
        == f"[guards] rank 0 stops with exit status {report.EXIT_STATUS} after rank 2 has ended"
    )

"""Entry points and safety: spawn + install(), -m modules, passthrough, disable, store loss,
and bit-identical training with and without the guard."""

from __future__ import annotations

import sys
from concurrent.futures import Future

import pytest
import torch
from guards_helpers import (
    CORPUS,
    WAIT_LIMIT,
    Run,
    environment,
    jobs,
    launch_all,
    outcome,
    run,
    tagged_lines,
)


@pytest.fixture(scope="session")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Future[Run]]:
    return launch_all(tmp_path_factory.getbasetemp() / "guards")


def _done(runs: dict[str, Future[Run]], name: str) -> Run:
    result = outcome(runs, name)
    assert result.returncode is not None, f"{name} timed out\n{result.stderr[-4000:]}"
    assert result.survivors == [], f"processes left behind: {result.survivors}"
    return result


@pytest.mark.timeout(WAIT_LIMIT + 60)
def test_install_inside_spawn_workers_reports_mismatch(runs: dict[str, Future[Run]]) -> None:
    result = _done(runs, "spawn")
    text = "\n".join(result.report_lines())
    assert result.returncode != 0, result.stderr[-4000:]
    line = tagged_lines(CORPUS / "spawn_install.py")
    assert f"rank 0 all_reduce float32[4] at spawn_install.py:{line['reduce']}" in text, text
    assert f"rank 1 broadcast float32[4] at spawn_install.py:{line['broadcast']}" in text


@pytest.mark.timeout(WAIT_LIMIT + 60)
def test_module_entry_point_with_relative_import(runs: dict[str, Future[Run]]) -> None:
    result = _done(runs, "module")
    assert result.returncode == 0, result.stderr[-4000:]
    assert "module rank 0 argv ['--lr', '0.1'] sum 12.0" in result.stdout
    assert "module rank 1 argv ['--lr', '0.1'] sum 12.0" in result.stdout
    assert result.report_lines() == []


@pytest.mark.timeout(WAIT_LIMIT + 60)
def test_disabled_guard_stays_silent(runs: dict[str, Future[Run]]) -> None:
    result = _done(runs, "disabled")
    assert result.returncode != 0
    assert "ValueError: bad batch 17" in result.stderr
    assert result.report_lines() == []


# What libstdc++ prints when gloo's teardown aborts a process that has finished its work: a
# torch shutdown race on a loaded machine, not the guard's doing.
_TEARDOWN_ABORT = "terminate called without an active exception"


@pytest.mark.timeout(WAIT_LIMIT + 510)
def test_unreachable_store_warns_once_and_run_completes(
    runs: dict[str, Future[Run]], tmp_path_factory: pytest.TempPathFactory
) -> None:
    result = _done(runs, "unreachable")
    for _ in range(3):
        if result.returncode == 0 or _TEARDOWN_ABORT not in result.stderr:
            break
        # the run aborted in gloo's teardown (seen in full runs on 2 loaded cores, twice in
        # a row once): the guard's behaviour is judged on a run that got that far, so it
        # is run again, up to three times
        cmd, env, cwd = jobs(tmp_path_factory.getbasetemp() / "guards")["unreachable"]
        result = run(cmd, env, cwd, timeout=150)
        assert result.survivors == [], f"processes left behind: {result.survivors}"
    assert result.returncode == 0, result.stderr[-4000:]
    lines = result.report_lines()
    assert len([x for x in lines if "cannot reach the c10d store" in x]) == 2, lines  # per rank
    assert all(x.startswith("[guards] disabled: ") for x in lines), lines


@pytest.mark.timeout(WAIT_LIMIT + 60)
def test_guarded_training_is_bit_identical(runs: dict[str, Future[Run]], tmp_path_factory) -> None:
    folder = tmp_path_factory.getbasetemp() / "guards"
    guarded = _done(runs, "identical-True")
    assert guarded.returncode == 0, guarded.stderr[-4000:]
    assert guarded.report_lines() == []
    plain_state = folder / "state-False.pt"
    if not plain_state.exists():
        # the plain run is the reference, not the subject: one that died (e.g. aborted in
        # gloo's teardown before saving) says nothing about the guard, so it is run again
        cmd, env, cwd = jobs(folder)["identical-False"]
        rerun = run(cmd, env, cwd, timeout=150)
        assert plain_state.exists(), f"the plain reference run failed twice\n{rerun.stderr[-4000:]}"
    plain = torch.load(plain_state)
    mine = torch.load(folder / "state-True.pt")
    assert plain.keys() == mine.keys()
    for key, value in plain.items():
        assert torch.equal(value, mine[key]), key


def _reported_mismatch(result: Run) -> None:
    text = "\n".join(result.report_lines())
    line = tagged_lines(CORPUS / "import_guards.py")
    assert f"rank 0 all_reduce float32[4] at import_guards.py:{line['reduce']}" in text, text
    assert f"rank 1 broadcast float32[4] at import_guards.py:{line['broadcast']}" in text, text
    for rank in (0, 1):  # installed once per process, whichever way
        assert text.count(f"[guards] rank {rank} stops with exit status 70") == 1, text


@pytest.mark.timeout(WAIT_LIMIT + 60)
def test_bare_import_installs_the_guard_under_torchrun(runs: dict[str, Future[Run]]) -> None:
    result = _done(runs, "import")
    assert result.returncode != 0
    assert result.stdout.count("guard installed: True") == 2, result.stdout
    _reported_mismatch(result)


@pytest.mark.timeout(WAIT_LIMIT + 60)
def test_bare_import_under_the_launcher_installs_once(runs: dict[str, Future[Run]]) -> None:
    result = _done(runs, "import-launcher")
    assert result.returncode != 0
    _reported_mismatch(result)


@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    ("env", "installed"),
    [
        ({}, False),  # a plain python process: nothing happens
        ({"TORCHELASTIC_RUN_ID": "x"}, True),  # torchrun's environment: it installs itself
        ({"TORCHELASTIC_RUN_ID": "x", "GUARDS_DISABLE": "1"}, False),
        ({"LOCAL_RANK": "0", "WORLD_SIZE": "1", "MASTER_ADDR": "127.0.0.1"}, True),
    ],
)
def test_bare_import_outside_torchrun(env: dict[str, str], installed: bool) -> None:
    script = str(CORPUS / "import_guards.py")
    result = run([sys.executable, script], environment(env), "/", timeout=100)
    assert result.returncode == 0, result.stderr[-3000:]
    assert f"guard installed: {installed}" in result.stdout, result.stdout
    assert result.report_lines() == []


@pytest.mark.timeout(60)
@pytest.mark.parametrize("code", [0, 3])
def test_script_argv_name_path_and_exit_code_pass_through(code: int) -> None:
    script = str(CORPUS / "argv_passthrough.py")
    cmd = [sys.executable, "-m", "guards", script, str(code), "--flag", "x y"]
    result = run(cmd, environment(), "/", timeout=50)
    assert result.returncode == code, result.stderr[-3000:]
    assert f"argv ['{code}', '--flag', 'x y'] helper-ok" in result.stdout


@pytest.mark.timeout(20)
def test_usage_without_arguments() -> None:
    result = run([sys.executable, "-m", "guards"], environment(), "/", timeout=15)
    assert result.returncode == 2
    assert "usage" in result.stderr

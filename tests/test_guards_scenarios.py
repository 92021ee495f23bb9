"""The runtime fault corpus, run under torchrun on gloo: outcome, report, the rank torchrun names
as the root cause, and no process left behind.

What is asserted holds on any machine, however loaded: the job ends (within the harness's hard
timeout), the report and torchrun's summary are right, a hang timeout is not cut short. How fast a
fault ends the job, against the same job without the guard, is measured by
``bench/bench_teardown.py``: wall-clock bounds flake on a busy machine.
"""

from __future__ import annotations

from concurrent.futures import Future

import pytest
from guards_helpers import SCENARIOS, WAIT_LIMIT, Run, expected, launch_all, name_of, outcome


@pytest.fixture(scope="session")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Future[Run]]:
    return launch_all(tmp_path_factory.getbasetemp() / "guards")


def _detail(result: Run) -> str:
    return f"\n--- stdout\n{result.stdout[-3000:]}\n--- stderr\n{result.stderr[-6000:]}"


# gloo's own words when it aborts a process on a size mismatch (std::terminate in its thread)
BACKEND_ABORT = "Is there a distributed collective mismatch in your code?"


def _check_report(scenario: dict, result: Run) -> None:
    lines = result.report_lines()
    if scenario.get("backend_may_abort_first") and not lines:
        # gloo killed the rank that received the wrong size before any report, and torchrun
        # stopped the other one: the user gets the backend's own message, as without the guard
        assert BACKEND_ABORT in result.stderr, "no report and no backend abort" + _detail(result)
        return
    text = "\n".join(lines)
    detail = _detail(result)
    for needle in scenario.get("contains", []):
        needle = expected(scenario["script"], needle)
        assert needle in text, f"missing {needle!r}" + detail
    some = [expected(scenario["script"], n) for n in scenario.get("contains_some", [])]
    found = [n for n in some if n in text]
    assert len(found) >= scenario.get("contains_at_least", len(some)), (
        f"only {found!r} of {some!r}" + detail
    )
    for needle in scenario.get("not_contains", []):
        assert expected(scenario["script"], needle) not in text, needle + detail
    if scenario["exit"] == "zero":
        assert all(x.startswith("[guards] warning") or x.startswith("[guards]  ") for x in lines), (
            "a clean run may only be warned about" + detail
        )
        assert bool(lines) == bool(scenario.get("contains")), detail
        return
    reporting = len(result.reporting_ranks())
    if "ranks_reporting" in scenario:
        assert reporting == scenario["ranks_reporting"], detail
    assert reporting >= scenario.get("ranks_reporting_min", 0), detail


def _check_root_cause(scenario: dict, result: Run) -> None:
    """torchrun's summary names the rank that failed and its own status, as without the guard,
    not a rank the guard stopped."""
    if "root_cause_rank" not in scenario:
        return
    want = (scenario["root_cause_rank"], scenario["root_cause_exitcode"])
    found = result.root_cause()
    assert found == want, f"torchrun's root cause {found}, expected {want}" + _detail(result)


@pytest.mark.timeout(WAIT_LIMIT + 60)
@pytest.mark.parametrize("scenario", SCENARIOS, ids=[name_of(s) for s in SCENARIOS])
def test_scenario(scenario: dict, runs: dict[str, Future[Run]]) -> None:
    result = outcome(runs, name_of(scenario))
    detail = _detail(result)
    assert result.returncode is not None, "timed out" + detail
    assert result.survivors == [], f"processes left behind: {result.survivors}" + detail
    if scenario["exit"] == "zero":
        assert result.returncode == 0, detail
        for needle in scenario.get("stdout_contains", []):
            assert needle in result.stdout, needle + detail
    else:
        assert result.returncode != 0, detail
        took = result.fault_to_exit
        assert took is not None, "no FAULT mark" + detail
        # a lower bound only: the guard must not stop a job before its hang timeout
        assert took >= scenario.get("min_fault_to_exit", 0), f"{took:.1f} s" + detail
        print(f"{name_of(scenario)}: {took:.1f} s from fault to exit")
    _check_report(scenario, result)
    _check_root_cause(scenario, result)

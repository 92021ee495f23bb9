"""The runtime fault corpus, run under torchrun on gloo: outcome, report, time (against the same
run without the guard where the scenario says so), and no process left behind."""

from __future__ import annotations

import re
from concurrent.futures import Future

import pytest
from guards_helpers import (
    SCENARIOS,
    TEARDOWN,
    WAIT_LIMIT,
    Run,
    expected,
    launch_all,
    outcome,
)


@pytest.fixture(scope="session")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Future[Run]]:
    return launch_all(tmp_path_factory.getbasetemp() / "guards")


def _detail(result: Run) -> str:
    return f"\n--- stdout\n{result.stdout[-3000:]}\n--- stderr\n{result.stderr[-6000:]}"


def _check_report(scenario: dict, result: Run) -> None:
    lines = result.report_lines()
    text = "\n".join(lines)
    detail = _detail(result)
    for needle in scenario.get("contains", []):
        needle = expected(scenario["script"], needle)
        assert needle in text, f"missing {needle!r}" + detail
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


def _check_time(scenario: dict, result: Run, runs: dict[str, Future[Run]]) -> None:
    took = result.fault_to_exit
    assert took is not None, "no FAULT mark" + _detail(result)
    if "max_fault_to_exit" in scenario:
        # the guard's budget, on top of what torchrun takes now to end a plain crashed job
        teardown = outcome(runs, TEARDOWN).fault_to_exit or 0.0
        bound = teardown + scenario["max_fault_to_exit"]
        assert took <= bound, f"{took:.1f} s, a plain crash {teardown:.1f} s" + _detail(result)
    assert took >= scenario.get("min_fault_to_exit", 0), f"{took:.1f} s" + _detail(result)
    if "plain_margin" not in scenario:
        print(f"{scenario['script']}: {took:.1f} s from fault to exit")
        return
    plain = outcome(runs, f"{scenario['script']}:plain")
    plain_took = plain.fault_to_exit
    assert plain_took is not None, "the plain run printed no FAULT mark" + _detail(plain)
    # a plain run killed at the harness timeout only bounds the guarded one from below
    if plain.returncode is not None:
        bound = plain_took + scenario["plain_margin"]
        assert took <= bound, f"guarded {took:.1f} s, plain {plain_took:.1f} s" + _detail(result)
    print(f"{scenario['script']}: {took:.1f} s guarded, {plain_took:.1f} s plain")
    if "gone_margin" in scenario:
        gone, plain_gone = _gone(result), _gone(plain)
        assert gone is not None and plain_gone is not None, "no GONE mark" + _detail(result)
        bound = plain_gone + scenario["gone_margin"]
        assert gone <= bound, f"ended {gone:.2f} s after the signal, plain {plain_gone:.2f} s"
        print(f"{scenario['script']}: signalled rank gone in {gone:.2f} s, plain {plain_gone:.2f}")


def _gone(result: Run) -> float | None:
    """Seconds a signalled rank took to end, as the script printed them (``GONE <seconds>``)."""
    found = re.search(r"GONE (\d+\.\d+)", result.stdout)
    return float(found.group(1)) if found else None


@pytest.mark.timeout(WAIT_LIMIT + 60)
@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s["script"] for s in SCENARIOS])
def test_scenario(scenario: dict, runs: dict[str, Future[Run]]) -> None:
    result = outcome(runs, scenario["script"])
    detail = _detail(result)
    assert result.returncode is not None, "timed out" + detail
    assert result.survivors == [], f"processes left behind: {result.survivors}" + detail
    if scenario["exit"] == "zero":
        assert result.returncode == 0, detail
        for needle in scenario.get("stdout_contains", []):
            assert needle in result.stdout, needle + detail
    else:
        assert result.returncode != 0, detail
    _check_report(scenario, result)
    if scenario["exit"] != "zero" or "plain_margin" in scenario:
        _check_time(scenario, result, runs)

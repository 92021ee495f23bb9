"""The runtime fault corpus, run under torchrun on gloo: outcome, report, time, no leftovers."""

from __future__ import annotations

from concurrent.futures import Future

import pytest
from guards_helpers import SCENARIOS, Run, expected, launch_all


@pytest.fixture(scope="session")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Future[Run]]:
    return launch_all(tmp_path_factory.getbasetemp() / "guards")


@pytest.mark.timeout(400)
@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s["script"] for s in SCENARIOS])
def test_scenario(scenario: dict, runs: dict[str, Future[Run]]) -> None:
    result = runs[scenario["script"]].result(timeout=390)
    detail = f"\n--- stdout\n{result.stdout[-3000:]}\n--- stderr\n{result.stderr[-6000:]}"
    assert result.returncode is not None, "timed out" + detail
    assert result.survivors == [], f"processes left behind: {result.survivors}" + detail
    lines = result.report_lines()
    if scenario["exit"] == "zero":
        assert result.returncode == 0, detail
        assert lines == [], detail
        for needle in scenario.get("stdout_contains", []):
            assert needle in result.stdout, needle + detail
        return
    assert result.returncode != 0, detail
    text = "\n".join(lines)
    for needle in scenario["contains"]:
        needle = expected(scenario["script"], needle)
        assert needle in text, f"missing {needle!r}" + detail
    assert len(result.reporting_ranks()) == scenario["ranks_reporting"], detail
    took = result.fault_to_exit
    assert took is not None, "no FAULT mark" + detail
    assert took <= scenario["max_fault_to_exit"], f"{took:.1f} s from fault to exit" + detail
    assert took >= scenario.get("min_fault_to_exit", 0), f"{took:.1f} s" + detail
    print(f"{scenario['script']}: {took:.1f} s from fault to exit")

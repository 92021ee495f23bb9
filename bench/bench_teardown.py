"""How fast a fault ends the job under the guard, against the same job without it (gloo, CPU).

The guard promises that a job plain torchrun ends in N seconds ends guarded in N + a few
seconds. ``corpus/runtime/scenarios.toml`` gives each scenario its budget: ``max_fault_to_exit``
(seconds from the script's FAULT mark to torchrun's exit, on top of the time torchrun takes to
end a plain job whose rank crashed: ``exception.py`` without the guard), ``plain_margin`` (on top
of the same script without the guard) and ``gone_margin`` (on top of the ``GONE <seconds>`` a
signalled rank took to end without the guard). Wall-clock bounds flake on a loaded machine, so
the tests do not assert them: this script measures them, in rounds where each guarded run and
its plain reference run back to back (the order alternating between rounds), and prints the
medians and whether each is within budget.

    python bench/bench_teardown.py [--rounds 3] [--only exception.py sigkill.py ...]
    python bench/bench_teardown.py --root-cause [--rounds 3]

``--root-cause`` instead runs each scenario that names ``root_cause_rank`` with and without the
guard and prints the (rank, exit status) torchrun's summary names as the root cause: the expected
values in the scenarios are those of the plain runs.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from guards_helpers import CORPUS, SCENARIOS, Run, environment, name_of, run, torchrun

TIMEOUT = 150.0
CRASH = "exception.py"  # the plain reference for `max_fault_to_exit`


def _gone(result: Run) -> float | None:
    found = re.search(r"GONE (\d+\.\d+)", result.stdout)
    return float(found.group(1)) if found else None


def _run(script: str, nproc: int, env: dict | None, guarded: bool) -> Run:
    cmd = torchrun(nproc, script, guarded=guarded)
    return run(cmd, environment(env), CORPUS, timeout=TIMEOUT)


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def _cell(value: float | None) -> str:
    return f"{value:7.1f}" if value is not None else "    n/a"


def measure(scenario: dict, rounds: int) -> dict[str, list[float]]:
    """Fault-to-exit of the guarded run and of its plain reference, per round."""
    budgeted = "max_fault_to_exit" in scenario
    ref_script = CRASH if budgeted else scenario["script"]
    ref_env = None if budgeted else scenario.get("env")
    out: dict[str, list[float]] = {"guarded": [], "plain": [], "gone": [], "plain_gone": []}
    for round_ in range(rounds):
        order = (True, False) if round_ % 2 == 0 else (False, True)
        for guarded in order:
            if guarded:
                result = _run(scenario["script"], scenario["nproc"], scenario.get("env"), True)
            else:
                result = _run(ref_script, 2 if budgeted else scenario["nproc"], ref_env, False)
            took = result.fault_to_exit
            # a plain run killed at the timeout (a hang) bounds nothing: left out
            if took is not None and result.returncode is not None:
                out["guarded" if guarded else "plain"].append(took)
            gone = _gone(result)
            if gone is not None:
                out["gone" if guarded else "plain_gone"].append(gone)
    return out


def _pair(rank_status: tuple[int, int] | None) -> str:
    return "-" if rank_status is None else f"{rank_status[0]}/{rank_status[1]}"


def root_causes(rounds: int, only: list[str] | None) -> None:
    """torchrun's root cause with and without the guard, against the scenario's expectation."""
    print(f"{'scenario':<20} {'expected':>9}  plain runs / guarded runs ({rounds} each)")
    for scenario in SCENARIOS:
        name = name_of(scenario)
        if "root_cause_rank" not in scenario or (only and name not in only):
            continue
        want = (scenario["root_cause_rank"], scenario["root_cause_exitcode"])
        found: dict[bool, list[str]] = {False: [], True: []}
        for round_ in range(rounds):
            for guarded in (True, False) if round_ % 2 == 0 else (False, True):
                cause = _run(scenario["script"], scenario["nproc"], scenario.get("env"), guarded)
                found[guarded].append(_pair(cause.root_cause()))
        plain, guarded = " ".join(found[False]), " ".join(found[True])
        print(f"{name:<20} {_pair(want):>9}  {plain} / {guarded}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", nargs="*", default=None, help="scenario names")
    parser.add_argument("--root-cause", action="store_true", help="torchrun's root cause instead")
    args = parser.parse_args()
    if args.root_cause:
        root_causes(args.rounds, args.only)
        return
    keys = ("max_fault_to_exit", "plain_margin", "gone_margin")
    chosen = [s for s in SCENARIOS if any(k in s for k in keys)]
    if args.only:
        chosen = [s for s in chosen if name_of(s) in args.only]
    print(f"{args.rounds} rounds; seconds from FAULT to exit, medians (reference: plain run)")
    print(f"{'scenario':<24} {'guarded':>7} {'plain':>7} {'excess':>7} {'budget':>7}  ok")
    for scenario in chosen:
        found = measure(scenario, args.rounds)
        guarded, plain = _median(found["guarded"]), _median(found["plain"])
        budget = scenario.get("max_fault_to_exit", scenario.get("plain_margin"))
        excess = guarded - plain if guarded is not None and plain is not None else None
        ok = "?" if excess is None or budget is None else "yes" if excess <= budget else "NO"
        name = name_of(scenario)
        print(f"{name:<24} {_cell(guarded)} {_cell(plain)} {_cell(excess)} {_cell(budget)}  {ok}")
        if "gone_margin" in scenario:
            gone, plain_gone = _median(found["gone"]), _median(found["plain_gone"])
            within = gone is not None and plain_gone is not None
            ok = "yes" if within and gone <= plain_gone + scenario["gone_margin"] else "NO"
            print(f"{'  signalled rank gone':<24} {_cell(gone)} {_cell(plain_gone)}  {ok}")


if __name__ == "__main__":
    main()

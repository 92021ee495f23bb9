"""Run the runtime fault corpus on NCCL (GPUs) and print a table: guarded against plain.

    python bench/gpu_check.py [--timeout 120] [--only SCRIPT ...] [--json out.json]
    python bench/gpu_check.py --backend gloo   # the same table on CPU: checks this script

Needs 2 or more CUDA GPUs (NCCL refuses two ranks on one GPU: "Duplicate GPU detected"). Each
scenario of ``corpus/runtime/scenarios.toml`` runs under torchrun twice, with and without
``-m guards``; a ``sitecustomize`` shim (``bench/gpu_shim``) moves the unchanged scripts to
NCCL with tensors on each rank's GPU. Columns: the exit status (``kill`` = still running at
``--timeout``, where NCCL hangs until its watchdog), seconds from the script's FAULT mark to the
end (whole run when there is no mark), whether the report holds the scenario's expected strings
(the expectations were written for gloo: NCCL does not abort a process on a size mismatch, so
``ranks_reporting`` is not checked), and the guard's first report line.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from guards_helpers import CORPUS, SCENARIOS, Run, environment, expected, run, torchrun  # noqa: E402


def _gpus() -> int:
    try:
        import torch
    except ImportError:
        return 0
    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def _env(scenario: dict, backend: str) -> dict[str, str]:
    env = environment(scenario.get("env"))
    env["PYTHONPATH"] = f"{HERE / 'gpu_shim'}:{env['PYTHONPATH']}"
    env["GUARDS_GPU_CHECK"] = backend
    return env


def _seconds(result: Run) -> str:
    took = result.fault_to_exit
    return f"{took if took is not None else result.took:6.1f}"


def _status(result: Run) -> str:
    return "kill" if result.returncode is None else str(result.returncode)


def _matches(scenario: dict, result: Run) -> str:
    text = "\n".join(result.report_lines())
    if scenario["exit"] == "zero":
        ok = result.returncode == 0 and not [x for x in result.report_lines() if "warning" not in x]
        return "yes" if ok else "no"
    needles = [expected(scenario["script"], n) for n in scenario.get("contains", [])]
    return "yes" if all(n in text for n in needles) else "no"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--backend", choices=("nccl", "gloo"), default="nccl")
    args = parser.parse_args()
    gpus = _gpus() if args.backend == "nccl" else 64
    if gpus < 2:
        print(f"gpu_check: {gpus} CUDA GPU(s) visible; NCCL needs one GPU per rank (2 or more)")
        return 2
    rows = []
    header = f"{'scenario':28} {'ranks':>5} {'guarded':>7} {'s':>6} {'plain':>5} {'s':>6} report"
    where = f"NCCL on {gpus} GPUs" if args.backend == "nccl" else "gloo on CPU"
    print(f"{where}, timeout {args.timeout:g} s\n{header}")
    for sc in SCENARIOS:
        if (args.only and sc["script"] not in args.only) or sc["nproc"] > gpus:
            continue
        env = _env(sc, args.backend)
        guarded = run(torchrun(sc["nproc"], sc["script"]), env, CORPUS, args.timeout)
        plain = run(torchrun(sc["nproc"], sc["script"], guarded=False), env, CORPUS, args.timeout)
        first = next(iter(guarded.report_lines()), "")
        row = {
            "scenario": sc["script"],
            "ranks": sc["nproc"],
            "guarded": _status(guarded),
            "guarded_s": _seconds(guarded).strip(),
            "plain": _status(plain),
            "plain_s": _seconds(plain).strip(),
            "report_as_expected": _matches(sc, guarded),
            "first_line": first,
            "left_behind": guarded.survivors + plain.survivors,
        }
        rows.append(row)
        print(
            f"{sc['script']:28} {sc['nproc']:5} {row['guarded']:>7} {_seconds(guarded)} "
            f"{row['plain']:>5} {_seconds(plain)} {row['report_as_expected']:>3}  {first[:90]}"
        )
        if row["left_behind"]:
            print(f"  processes left behind: {row['left_behind']}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

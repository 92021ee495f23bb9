"""Run the runtime fault corpus on NCCL (GPUs) and print a table: guarded against plain.

    python bench/gpu_check.py [--timeout 120] [--only SCRIPT ...] [--json out.json]
    python bench/gpu_check.py --backend gloo   # the same table on CPU: checks this script
    python bench/gpu_check.py --backend gloo-cuda --guarded-only   # one GPU is enough

Needs 2 or more CUDA GPUs (NCCL refuses two ranks on one GPU: "Duplicate GPU detected"). Where
only one is lent, ``gloo-cuda`` keeps gloo's collectives but puts every rank's tensors on the GPU
(ranks share it): the guard's hooks then see CUDA tensors, streams and a real CUDA allocator. Each
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
    needles = [expected(scenario["script"], n) for n in scenario.get("contains", [])]
    found = all(n in text for n in needles)
    if scenario["exit"] == "zero":  # a report's first line says what it is; the rest is indented
        heads = [x for x in result.report_lines() if not x.startswith("[guards]  ")]
        found = found and result.returncode == 0 and all("warning" in x for x in heads)
    return "yes" if found else "no"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--backend", choices=("nccl", "gloo", "gloo-cuda"), default="nccl")
    parser.add_argument(
        "--guarded-only", action="store_true", help="skip the plain runs (they hang to --timeout)"
    )
    args = parser.parse_args()
    gpus = _gpus() if args.backend != "gloo" else 0
    if args.backend == "nccl" and gpus < 2:
        print(f"gpu_check: {gpus} CUDA GPU(s) visible; NCCL needs one GPU per rank (2 or more)")
        return 2
    if args.backend == "gloo-cuda" and gpus < 1:
        print("gpu_check: no CUDA GPU visible; gloo-cuda puts the ranks' tensors on one")
        return 2
    rows = []
    header = f"{'scenario':28} {'ranks':>5} {'guarded':>7} {'s':>6} {'plain':>5} {'s':>6} report"
    where = {
        "nccl": f"NCCL on {gpus} GPUs",
        "gloo": "gloo on CPU",
        "gloo-cuda": f"gloo with every rank's tensors on {gpus} GPU(s)",
    }[args.backend]
    print(f"{where}, timeout {args.timeout:g} s\n{header}")
    for sc in SCENARIOS:
        if args.only and sc["script"] not in args.only:
            continue
        if args.backend == "nccl" and sc["nproc"] > gpus:
            continue
        env = _env(sc, args.backend)
        guarded = run(torchrun(sc["nproc"], sc["script"]), env, CORPUS, args.timeout)
        plain = None
        if not args.guarded_only:
            unguarded = torchrun(sc["nproc"], sc["script"], guarded=False)
            plain = run(unguarded, env, CORPUS, args.timeout)
        first = next(iter(guarded.report_lines()), "")
        row = {
            "scenario": sc["script"],
            "ranks": sc["nproc"],
            "guarded": _status(guarded),
            "guarded_s": _seconds(guarded).strip(),
            "plain": _status(plain) if plain else "-",
            "plain_s": _seconds(plain).strip() if plain else "-",
            "report_as_expected": _matches(sc, guarded),
            "first_line": first,
            "left_behind": guarded.survivors + (plain.survivors if plain else []),
        }
        rows.append(row)
        print(
            f"{sc['script']:28} {sc['nproc']:5} {row['guarded']:>7} {_seconds(guarded)} "
            f"{row['plain']:>5} {row['plain_s']:>6} {row['report_as_expected']:>3}  {first[:90]}"
        )
        if row["report_as_expected"] == "no":
            shown = guarded.report_lines() or guarded.stderr.splitlines()[-12:]
            for line in shown:
                print(f"  | {line[:160]}")
        if row["left_behind"]:
            print(f"  processes left behind: {row['left_behind']}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

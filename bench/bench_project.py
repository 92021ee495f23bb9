"""Speed on a real repository: ddplint on timm (pytorch-image-models, pinned in
bench/realworld/repos.toml) beside its floor and ruff, in one run.

Every figure is the median of `--repeat` runs, the compared commands alternating within
each round, each a subprocess (interpreter start-up included), with its peak memory:

* whole repository, no cache: `ddplint check --no-cache .` (`--jobs 1` and `--jobs 2`)
  beside the floor, one process parsing every Python file with `libcst.parse_module`;
* whole repository, warm cache: `ddplint check .` after one run filled the cache;
* one file: `ddplint check train.py`, cold (`--no-cache`) and warm, beside the floor of
  starting Python, importing libcst and parsing that file;
* pre-commit: `ddplint check --check-importers timm/utils/distributed.py` (the hook's
  command for a staged helper), cold and warm, beside the same one-file floor;
* ruff (`ruff check --no-cache`) on the same targets.

With `--before DIR` (a checkout of an older ddplint) its ddplint runs too, in the same
rounds, for a before/after comparison. Each version's package is byte-compiled first, as an
installed one is (with `PYTHONDONTWRITEBYTECODE` set, every run would compile it again).
`--only TEXT` keeps the cases whose title holds `TEXT` (`--only "no cache" --jobs 1` where
one run takes minutes); `--timeout S` stops a run after `S` seconds (a version that does
not finish), counted at the time it ran and noted beside the figure. Usage:

    .venv/bin/python bench/bench_project.py --repo /work/timm
    .venv/bin/python bench/bench_project.py --repo /work/timm --before /tmp/old --repeat 3
    .venv/bin/python bench/bench_project.py --repo LoRA --only "no cache" --jobs 1 \
        --timeout 900 --file examples/NLG/src/gpt2_ft.py --before /tmp/old --repeat 1
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
# Runs a command and prints its wall time, the peak memory of its largest process and the
# CPU seconds of its process tree (on a shared machine the wall clock also counts the time
# other processes hold the cores; CPU seconds do not, but they add up the workers).
_MEASURE = """\
import os, resource, signal, subprocess, sys, time
start = time.perf_counter()
child = subprocess.Popen(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True)
try:
    child.wait(timeout=float(sys.argv[1]) or None)
    finished = 1
except subprocess.TimeoutExpired:
    os.killpg(child.pid, signal.SIGKILL)
    child.wait()
    finished = 0
took = time.perf_counter() - start
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(took, usage.ru_maxrss, usage.ru_utime + usage.ru_stime, finished)
"""
_PARSE_ALL = """\
import os, sys, libcst
for folder, subfolders, files in os.walk("."):
    subfolders[:] = [d for d in subfolders if not d.startswith(".")]
    for name in files:
        if name.endswith(".py"):
            with open(os.path.join(folder, name), "rb") as handle:
                try:
                    libcst.parse_module(handle.read())
                except Exception:
                    pass
"""
_PARSE_ONE = "import sys, libcst; libcst.parse_module(open(sys.argv[1], 'rb').read())"


def measure(
    command: list[str], cwd: Path, env: dict[str, str], timeout: float
) -> tuple[float, float, float, bool]:
    """(seconds, peak MiB, CPU seconds, finished) of one run of `command`, stopped after
    `timeout` seconds (0: never)."""
    out = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(timeout), *command],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return float(out[0]), int(out[1]) / 1024, float(out[2]), out[3] == "1"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, required=True, help="a checkout of timm")
    parser.add_argument("--file", default="train.py")
    parser.add_argument("--helper", default="timm/utils/distributed.py")
    parser.add_argument("--before", type=Path, help="an older ddplint checkout to compare")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--jobs", default="1,2", help="worker counts of the whole-repository run")
    parser.add_argument("--only", default="", help="keep the cases whose title holds this")
    parser.add_argument("--timeout", type=float, default=0, help="seconds per run (0: none)")
    args = parser.parse_args()
    python = sys.executable
    ruff = shutil.which("ruff", path=str(Path(python).parent)) or "ruff"
    versions = {"after": dict(os.environ)}
    if args.before is not None:
        versions["before"] = {**os.environ, "PYTHONPATH": str(args.before.resolve())}
    for env in versions.values():  # bytecode as an installed package has it (pip compiles;
        # `PYTHONDONTWRITEBYTECODE` would otherwise make every run compile ddplint again)
        package = subprocess.run(
            [python, "-c", "import ddplint, os; print(os.path.dirname(ddplint.__file__))"],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        subprocess.run([python, "-m", "compileall", "-q", package], env=env, check=True)
    scratch = Path(tempfile.mkdtemp(prefix="ddplint-bench-"))
    repo = scratch / args.repo.name
    shutil.copytree(args.repo, repo, ignore=shutil.ignore_patterns(".ddplint_cache", ".git"))
    ddplint = [python, "-m", "ddplint", "check", "--exit-zero", "-q"]
    cases: dict[str, list[tuple[str, list[str], str]]] = {
        "whole repository, no cache": [
            ("floor: libcst parse of every file", [python, "-c", _PARSE_ALL], ""),
            ("ruff", [ruff, "check", "--no-cache", "--exit-zero", "-q", "."], ""),
        ],
        "whole repository, warm cache": [],
        f"{args.file}, no cache": [
            ("floor: python + libcst + parse", [python, "-c", _PARSE_ONE, args.file], ""),
            ("ruff", [ruff, "check", "--no-cache", "--exit-zero", "-q", args.file], ""),
        ],
        f"{args.file}, warm cache": [
            ("floor: python + libcst + parse", [python, "-c", _PARSE_ONE, args.file], ""),
        ],
        f"pre-commit on {args.helper} (--check-importers), no cache": [],
        f"pre-commit on {args.helper} (--check-importers), warm cache": [],
    }
    for version in versions:
        cases["whole repository, no cache"] += [
            (f"ddplint {version} --jobs {n}", [*ddplint, "--no-cache", "--jobs", n, "."], version)
            for n in args.jobs.split(",")
        ]
        cases["whole repository, warm cache"].append(
            (f"ddplint {version}", [*ddplint, "."], version)
        )
        cases[f"{args.file}, no cache"].append(
            (f"ddplint {version}", [*ddplint, "--no-cache", args.file], version)
        )
        cases[f"{args.file}, warm cache"].append(
            (f"ddplint {version}", [*ddplint, args.file], version)
        )
        if version == "after":
            importers = [*ddplint, "--check-importers", args.helper]
            cases[f"pre-commit on {args.helper} (--check-importers), no cache"].append(
                (f"ddplint {version}", [*importers[:-1], "--no-cache", args.helper], version)
            )
            cases[f"pre-commit on {args.helper} (--check-importers), warm cache"].append(
                (f"ddplint {version}", importers, version)
            )
    cases = {case: commands for case, commands in cases.items() if args.only in case}
    caches = {}
    warm = any("warm" in case for case in cases)
    for version, env in versions.items() if warm else ():  # each version's cache, filled once
        caches[version] = scratch / f"cache-{version}"
        shutil.rmtree(repo / ".ddplint_cache", ignore_errors=True)
        subprocess.run([*ddplint, "."], cwd=repo, env=env, capture_output=True)
        if version == "after":
            subprocess.run(
                [*ddplint, "--check-importers", args.helper], cwd=repo, env=env, capture_output=True
            )
        shutil.move(repo / ".ddplint_cache", caches[version])
    results: dict[str, dict[str, list[tuple[float, float, float, bool]]]] = {c: {} for c in cases}
    for _ in range(args.repeat):
        for case, commands in cases.items():
            for label, command, version in commands:
                env = versions.get(version, dict(os.environ))
                shutil.rmtree(repo / ".ddplint_cache", ignore_errors=True)
                if version and "warm" in case:
                    shutil.copytree(caches[version], repo / ".ddplint_cache")
                run = measure(command, repo, env, args.timeout)
                results[case].setdefault(label, []).append(run)
    shutil.rmtree(scratch, ignore_errors=True)
    for case, rows in results.items():
        print(f"\n{case} (median of {args.repeat}; wall, peak memory, CPU of the process tree)")
        floors = [r for k, r in rows.items() if "floor" in k]
        floor = statistics.median(t for t, *_ in floors[0]) if floors else None
        floor_cpu = statistics.median(c for _, _, c, _ in floors[0]) if floors else None
        for label, runs in rows.items():
            took = statistics.median(t for t, *_ in runs)
            memory = max(m for _, m, _, _ in runs)
            cpu = statistics.median(c for _, _, c, _ in runs)
            ratio = f"{took / floor:5.2f}x floor" if floor else ""
            cpu_ratio = f"{cpu / floor_cpu:5.2f}x floor" if floor_cpu else ""
            stopped = sum(not done for *_, done in runs)
            note = f"  ({stopped} of {len(runs)} stopped at {args.timeout:g} s)" if stopped else ""
            print(
                f"  {label:44} {took:7.2f} s  {memory:6.0f} MiB  {ratio:12}"
                f"  CPU {cpu:6.2f} s {cpu_ratio}{note}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())

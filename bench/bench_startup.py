"""Startup benchmark: what starting ddplint costs, beside starting Python and importing LibCST.

Times, as fresh processes, interleaved round after round (the order rotated every round, so
that a slow moment of a shared machine falls on every command alike):

* `python -c pass` (the floor) and `python -c "import libcst"` (the parser every check needs);
* `python -c "import ddplint"`, `ddplint --version`;
* `ddplint check --no-cache` of a tiny file without DDP code (skipped unparsed) and of a tiny
  clean DDP script (parsed and checked).

It prints each command's median wall time and its ratios to the two references.

    .venv/bin/python bench/bench_startup.py              # 15 rounds
    .venv/bin/python bench/bench_startup.py --rounds 31
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CLEAN_DDP = """\
import os
import torch
import torch.distributed as dist

dist.init_process_group("nccl")
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
"""


def commands(folder: Path) -> dict[str, list[str]]:
    python = sys.executable
    plain = folder / "plain.py"
    plain.write_text("import os\n\nprint(os.sep)\n", encoding="utf-8")
    ddp = folder / "ddp.py"
    ddp.write_text(CLEAN_DDP, encoding="utf-8")
    ddplint = [python, "-m", "ddplint"]
    check = [*ddplint, "check", "--no-cache", "--isolated"]
    return {
        "python -c pass": [python, "-c", "pass"],
        "python -c 'import libcst'": [python, "-c", "import libcst"],
        "python -c 'import ddplint'": [python, "-c", "import ddplint"],
        "ddplint --version": [*ddplint, "--version"],
        "ddplint check (file without DDP code)": [*check, str(plain)],
        "ddplint check (clean DDP script)": [*check, str(ddp)],
    }


def timed(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        runs = commands(Path(tmp))
        names = list(runs)
        for name in names:  # warm the file cache and the bytecode, untimed
            timed(runs[name])
        times: dict[str, list[float]] = {name: [] for name in names}
        for round_ in range(args.rounds):
            shift = round_ % len(names)
            for name in names[shift:] + names[:shift]:
                times[name].append(timed(runs[name]))
    medians = {name: statistics.median(values) for name, values in times.items()}
    floor = medians["python -c pass"]
    libcst = medians["python -c 'import libcst'"]
    print(f"{args.rounds} interleaved rounds, {sys.executable}, median wall time")
    print(f"{'command':<40} {'median s':>9} {'/ python':>9} {'/ libcst':>9}")
    for name, median in medians.items():
        print(f"{name:<40} {median:>9.3f} {median / floor:>9.2f} {median / libcst:>9.2f}")


if __name__ == "__main__":
    main()

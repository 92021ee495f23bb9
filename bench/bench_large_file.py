"""Speed benchmark: ddplint on one very large DDP file against a bare LibCST parse.

Generates one deterministic file of about `--lines` lines made of many DDP training
functions (rank-guarded saves and barriers, losses divided by the world size, NaN skips,
swallowed OOMs, accumulation loops, evaluation on rank 0, hard-coded devices, ...), so that
most rules find something, then times, alternating in one process for `--repeat` rounds
(the order flipped every round, each step run once untimed first):

* the floor: `libcst.parse_module` of the file;
* ddplint with every rule as `ddplint check --no-cache --jobs 1 FILE` runs it
  (`ddplint.runner.run`: its own parse, the project layer included).

It prints the median CPU time of each (the process's own CPU seconds: on a shared machine
the wall clock also counts the time other processes hold the cores), the median of the
per-round ratios with their range, the same ratio in wall-clock time, the peak RSS of each
(measured in processes of their own) and the number of findings.

    .venv/bin/python bench/bench_large_file.py                  # 50,000 lines, 5 rounds
    .venv/bin/python bench/bench_large_file.py --lines 2500 5000 10000 20000 --repeat 5

With several sizes it also prints the growth of ddplint's time from one size to the
next (2.00 per doubling is linear). With `--before DIR` (a checkout of an older ddplint)
both run, each round one process per version, the versions alternating:

    .venv/bin/python bench/bench_large_file.py --lines 50000 --repeat 3 --before /tmp/old
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HEADER = """import os
import math
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler

WORLD = int(os.environ["WORLD_SIZE"])


def is_main_process():
    return dist.get_rank() == 0


def save_on_master(state, path):
    if is_main_process():
        torch.save(state, path)

"""

# One unit of about 100 lines; `{i}` makes every name distinct.
UNIT = """
def reduce_mean_{i}(t):
    t = t.clone()
    dist.all_reduce(t)
    return t / dist.get_world_size()


def save_checkpoint_{i}(model, path):
    torch.save(model.state_dict(), path)
    dist.barrier()


class Trainer{i}:
    def __init__(self, model, args):
        self.gpu_id = int(os.environ["LOCAL_RANK"])
        self.model = DDP(model.cuda(self.gpu_id), device_ids=[self.gpu_id])
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=args.lr)
        self.is_master = dist.get_rank() == 0

    def run_epoch(self, loader, epoch):
        for x, y in loader:
            out = self.model(x.cuda(self.gpu_id))
            loss = out.sum() / WORLD
            if torch.isnan(loss):
                continue
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
        if self.is_master:
            dist.barrier()
            torch.save(self.model.state_dict(), "trainer_{i}.pt")


def train_{i}(args, dataset, criterion):
    local_rank = int(os.environ["LOCAL_RANK"])
    rank = dist.get_rank()
    model = DDP(torch.nn.Linear(8, 8).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    sampler = DistributedSampler(dataset, shuffle=True)
    loader = DataLoader(dataset, batch_size=32, sampler=sampler, shuffle=True)
    for epoch in range(args.epochs):
        for step, (x, y) in enumerate(loader):
            x = x.to("cuda:0")
            try:
                loss = criterion(model(x), y) / dist.get_world_size()
            except torch.cuda.OutOfMemoryError:
                torch.cuda.empty_cache()
                continue
            if loss.item() > 1e4:
                break
            with model.no_sync():
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
        if rank == 0:
            save_checkpoint_{i}(model, "ckpt_{i}.pt")
            acc = reduce_mean_{i}(torch.tensor(1.0))
            model.eval()
            model(torch.zeros(1, 8))
        if not is_main_process():
            continue
        dist.barrier()
    return model


def evaluate_{i}(model, loader, world_size):
    if world_size == 1:
        return None
    total = torch.zeros(1)
    for x, y in loader:
        total += model(x).sum()
    dist.all_reduce(total)
    return total / world_size


def worker_{i}(rank, args):
    if rank != 0:
        return
    dist.barrier()
"""


def generate(lines: int) -> str:
    unit_lines = UNIT.count("\n")
    units = max(1, (lines - HEADER.count("\n")) // unit_lines)
    return HEADER + "".join(UNIT.format(i=i) for i in range(units))


PARSE = """
import sys, resource, libcst
libcst.parse_module(open(sys.argv[1], encoding="utf-8").read())
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""

# What `ddplint check --no-cache --jobs 1 FILE` runs: the runner, with the project layer.
LINT = """
import sys, resource
from pathlib import Path
from ddplint.cache import Cache
from ddplint.rule import all_rules
from ddplint.runner import run
codes = set(all_rules())
result = run([Path(sys.argv[1])], lambda _: codes, Cache(None), jobs=1)
assert not result.internal_errors, result.internal_errors
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, len(result.diagnostics))
"""

# Parse and check alternate in one process, the order flipped every round, so that a change
# in machine load hits both alike; each is run once untimed first (imports, first calls).
ALTERNATE = """
import gc, sys, time, libcst
from pathlib import Path
from ddplint.cache import Cache
from ddplint.rule import all_rules
from ddplint.runner import run
path, rounds = sys.argv[1], int(sys.argv[2])
text = open(path, "rb").read().decode("utf-8")
codes = set(all_rules())
steps = {
    "parse": lambda: libcst.parse_module(text),
    "lint": lambda: run([Path(path)], lambda _: codes, Cache(None), jobs=1),
}
for step in steps.values():
    step()
for index in range(rounds):
    wall, cpu = {}, {}
    for name in sorted(steps, reverse=bool(index % 2)):
        gc.collect()
        start, start_cpu = time.perf_counter(), time.process_time()
        steps[name]()
        cpu[name] = time.process_time() - start_cpu
        wall[name] = time.perf_counter() - start
    print(cpu["parse"], cpu["lint"], wall["parse"], wall["lint"], flush=True)
"""


def _run(script: str, *args: object, env: dict[str, str] | None = None) -> list[list[float]]:
    """Run `script` in a fresh interpreter, outside the current folder: `python -c` puts
    that folder first on the path, so from a checkout every version would import its
    `ddplint` and not the one `PYTHONPATH` names."""
    out = subprocess.run(
        [sys.executable, "-c", script, *map(str, args)],
        check=True,
        capture_output=True,
        text=True,
        env=env,
        cwd=tempfile.gettempdir(),
    ).stdout
    return [[float(v) for v in line.split()] for line in out.splitlines()]


def _measure(
    lines: int, rounds: int, versions: dict[str, dict[str, str]]
) -> list[dict[str, float]]:
    """For each version (environment), medians over `rounds` rounds of the parse floor and
    ddplint, the median of the per-round ratios (with their range), and each one's peak RSS
    in its own process. One version: the rounds alternate in one process; several: each
    round is a process per version, the versions alternating, their order flipped."""
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "pyproject.toml").write_text("")  # its own project: the root is here
        path = Path(tmp) / "big_train.py"
        text = generate(lines)
        path.write_text(text, encoding="utf-8")
        times: dict[str, list[list[float]]] = {v: [] for v in versions}
        if len(versions) == 1:
            (name, env), *_ = versions.items()
            times[name] = _run(ALTERNATE, path, rounds, env=env)
        for index in range(rounds if len(versions) > 1 else 0):
            for name in sorted(versions, reverse=bool(index % 2)):
                times[name] += _run(ALTERNATE, path, 1, env=versions[name])
        parse_rss = _run(PARSE, path)[0][0]
        figures = []
        for name, env in versions.items():
            lint_rss, findings = _run(LINT, path, env=env)[0]
            ratios = [lint / parse for parse, lint, _, _ in times[name]]
            figures.append(
                {
                    "lines": text.count("\n"),
                    "parse_s": statistics.median(t[0] for t in times[name]),
                    "lint_s": statistics.median(t[1] for t in times[name]),
                    "ratio": statistics.median(ratios),
                    "ratio_min": min(ratios),
                    "ratio_max": max(ratios),
                    "wall_ratio": statistics.median(
                        lint / parse for _, _, parse, lint in times[name]
                    ),
                    "parse_rss_mib": parse_rss / 1024,
                    "lint_rss_mib": lint_rss / 1024,
                    "findings": findings,
                }
            )
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, nargs="+", default=[50_000], help="file sizes")
    parser.add_argument("--repeat", type=int, default=5, help="alternating rounds per size")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    parser.add_argument("--before", type=Path, help="an older ddplint checkout to compare")
    args = parser.parse_args()
    versions = {"after": dict(os.environ)}
    if args.before is not None:
        versions["before"] = {**os.environ, "PYTHONPATH": str(args.before.resolve())}
    print(
        f"{args.repeat} rounds per size: median CPU seconds of the process, median "
        "of the per-round ratios (min-max), the same ratio in wall-clock time; growth: "
        "ddplint's CPU time over the previous size's"
    )
    print(
        f"{'version':>7} {'lines':>7} {'parse s':>8} {'ddplint s':>9} {'ratio':>6} {'min-max':>11} "
        f"{'wall':>6} {'growth':>7} {'parse MiB':>9} {'ddplint MiB':>11} {'findings':>8}"
    )
    figures: dict[str, list[dict[str, float]]] = {v: [] for v in versions}
    for lines in args.lines:
        for version, row in zip(versions, _measure(lines, args.repeat, versions), strict=True):
            earlier = figures[version]
            growth = ""
            if earlier:
                size = row["lines"] / earlier[-1]["lines"]
                growth = f"{row['lint_s'] / earlier[-1]['lint_s']:.2f}/{size:.0f}x"
            earlier.append(row)
            spread = f"{row['ratio_min']:.2f}-{row['ratio_max']:.2f}"
            print(
                f"{version:>7} {row['lines']:7.0f} {row['parse_s']:8.2f} {row['lint_s']:9.2f} "
                f"{row['ratio']:5.2f}x {spread:>11} {row['wall_ratio']:5.2f}x {growth:>7} "
                f"{row['parse_rss_mib']:9.0f} "
                f"{row['lint_rss_mib']:11.0f} {row['findings']:8.0f}",
                flush=True,
            )
    if args.json is not None:
        args.json.write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()

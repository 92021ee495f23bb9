"""``python -m guards compare``: run a script at several process counts (or read two recorded
runs) and say whether they are the same training.

Exit status: 0 equivalent, 1 not equivalent, 2 bad usage or a run that failed, 3 inconclusive
(the values agree but could not differ: a loss constant at every step, or no gradients).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from . import plot
from .judge import DEFAULT_RTOL, Verdict, judge
from .launch import Launch, launch
from .merge import Run, load_run
from .records import RecordError
from .render import legend, lr_groups, notes, table, verdict_lines

DEFAULT_STEPS = 20
DEFAULT_TIMEOUT = 1800.0
EQUIVALENT, DIFFERENT, FAILED, INCONCLUSIVE = 0, 1, 2, 3


class UsageError(Exception):
    pass


def _counts(text: str) -> list[int]:
    try:
        counts = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected process counts like 1,2: {text!r}") from None
    if len(counts) < 2 or min(counts) < 1 or len(set(counts)) != len(counts):
        raise argparse.ArgumentTypeError(f"expected two or more different counts >= 1: {text!r}")
    return counts


def _positive(kind: Callable[[str], float]) -> Callable[[str], float]:
    def parse(text: str) -> float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if value <= 0:
            raise argparse.ArgumentTypeError(f"must be > 0: {text!r}")
        return value

    return parse


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m guards compare",
        description="Run SCRIPT once per process count under torchrun, stop each run after K "
        "optimizer steps and compare them step by step; or compare two folders recorded with "
        "`python -m guards --record DIR SCRIPT`.",
        epilog="exit status: 0 equivalent, 1 not equivalent, 2 usage error or a failed run, "
        "3 inconclusive (a loss constant at every step, or no gradients, in both runs)",
    )
    p.add_argument("--nproc", type=_counts, default=[1, 2], help="process counts (default 1,2)")
    p.add_argument("--steps", type=_positive(int), default=DEFAULT_STEPS, help="steps per run")
    p.add_argument("--rtol", type=_positive(float), default=DEFAULT_RTOL, help="relative tolerance")
    p.add_argument("--plot", metavar="FILE.png", help="draw the loss curves and their difference")
    p.add_argument("--keep", metavar="DIR", help="keep the recordings in DIR")
    p.add_argument(
        "--timeout", type=_positive(float), default=DEFAULT_TIMEOUT, help="seconds per run"
    )
    p.add_argument("target", metavar="SCRIPT | DIR_A", help="the training script, or a recording")
    p.add_argument("args", nargs=argparse.REMAINDER, metavar="ARGS | DIR_B")
    return p


def _failure(run: Launch) -> str:
    status = "timed out" if run.returncode is None else f"exited with status {run.returncode}"
    tail = run.stderr_tail()
    return f"the run on {_label(run.nproc)} {status}" + (
        f"; the end of its stderr:\n{tail}" if tail else " (nothing on stderr)"
    )


def _label(nproc: int) -> str:
    return f"{nproc} process" + ("" if nproc == 1 else "es")


def _record_all(ns: argparse.Namespace, folder: Path) -> list[Run]:
    script = Path(ns.target)
    if not script.is_file():
        raise UsageError(f"{ns.target}: no such script")
    runs = []
    for nproc in ns.nproc:
        print(f"running {ns.target} on {_label(nproc)} ({ns.steps} steps) ...", file=sys.stderr)
        done = launch(nproc, folder / f"n{nproc}", ns.target, ns.args, ns.steps, ns.timeout)
        if done.returncode != 0:
            raise RecordError(_failure(done))
        try:
            run = load_run(done.folder, _label(nproc))
        except RecordError as exc:
            raise RecordError(
                f"the run with {nproc} processes recorded nothing usable: {exc}"
            ) from exc
        if not run.steps:
            raise RecordError(
                f"the run on {_label(nproc)} ended without an optimizer step: "
                "nothing to compare (does the script call optimizer.step()?)"
            )
        runs.append(run)
    return runs


def _read_two(ns: argparse.Namespace) -> list[Run]:
    first, second = Path(ns.target), Path(ns.args[0])
    runs = [load_run(first), load_run(second)]
    for run, folder in zip(runs, (first, second), strict=False):
        run.label = f"{folder.name or folder} ({run.processes()})"
    return runs


def verdicts(runs: list[Run], rtol: float) -> list[tuple[Run, Verdict]]:
    """Every run after the first judged against the first."""
    return [(run, judge(runs[0], run, rtol)) for run in runs[1:]]


def report(runs: list[Run], rtol: float) -> int:
    reference = runs[0]
    verdicts_ = verdicts(runs, rtol)
    marks = {v.step: ">" for _, v in verdicts_ if v.step is not None}
    print(legend(runs))
    print("\n".join(table(runs, marks)))
    for line in lr_groups(runs):
        print(line)
    print()
    for line in notes(runs):
        print(line)
    for run, verdict in verdicts_:
        print("\n".join(verdict_lines(reference, run, verdict)))
    if all(v.equivalent for _, v in verdicts_):
        return EQUIVALENT
    return INCONCLUSIVE if all(v.equivalent or v.inconclusive for _, v in verdicts_) else DIFFERENT


def main(argv: list[str]) -> int:
    ns = parser().parse_args(argv)
    compare_folders = Path(ns.target).is_dir()
    try:
        if compare_folders and (len(ns.args) != 1 or not Path(ns.args[0]).is_dir()):
            raise UsageError("give two recorded folders: compare DIR_A DIR_B")
        if ns.plot:
            plot.check()
        if compare_folders:
            runs = _read_two(ns)
        else:
            folder = Path(ns.keep) if ns.keep else Path(tempfile.mkdtemp(prefix="guards-compare-"))
            try:
                runs = _record_all(ns, folder)
            finally:
                if not ns.keep:
                    shutil.rmtree(folder, ignore_errors=True)
        status = report(runs, ns.rtol)
        if ns.plot:
            plot.draw(runs, Path(ns.plot), [v for _, v in verdicts(runs, ns.rtol)], ns.rtol)
            print(f"plot written to {ns.plot}")
        return status
    except (UsageError, RecordError, plot.PlotUnavailable) as exc:
        print(f"guards compare: error: {exc}", file=sys.stderr)
        return FAILED

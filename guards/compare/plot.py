"""``--plot``: the loss curves of every run and their difference to the first, per step, with the
verdict, the tolerance and the first step that differs.

matplotlib is an optional extra (``pip install 'ddplint[plot]'``), imported only here, only when
asked for.
"""

from __future__ import annotations

import importlib.util
import textwrap
from pathlib import Path
from typing import Any

from .judge import Verdict
from .merge import Run

TITLE_WIDTH = 90


class PlotUnavailable(Exception):
    pass


def check() -> None:
    """Fail before any run starts when matplotlib is missing."""
    if importlib.util.find_spec("matplotlib") is None:
        raise PlotUnavailable(
            "--plot needs matplotlib, which is not installed: pip install 'ddplint[plot]' "
            "(or pip install matplotlib)"
        )


def differences(reference: Run, run: Run) -> list[tuple[int, float, float]]:
    """Per step with both losses: (step, |difference|, the tolerance ``rtol`` allows there as a
    multiple of rtol: max(|a|, |b|))."""
    return [
        (a.index, abs(a.loss - b.loss), max(abs(a.loss), abs(b.loss)))
        for a, b in zip(reference.steps, run.steps, strict=False)
        if a.loss is not None and b.loss is not None
    ]


def title(runs: list[Run], verdicts: list[Verdict]) -> str:
    """The verdict headline of each run against the first, wrapped."""
    lines = [
        f"{run.label} vs {runs[0].label}: {v.lines[0]}"
        for run, v in zip(runs[1:], verdicts, strict=False)
    ]
    return "\n".join(
        textwrap.fill(textwrap.shorten(line, TITLE_WIDTH * 2, placeholder=" ..."), TITLE_WIDTH)
        for line in lines
    )


def draw(runs: list[Run], path: Path, verdicts: list[Verdict], rtol: float) -> None:
    """Write the figure of ``figure`` to ``path`` (PNG)."""
    import matplotlib.pyplot as plt

    drawn = figure(runs, verdicts, rtol)
    drawn.savefig(path, dpi=100)
    plt.close(drawn)


def figure(runs: list[Run], verdicts: list[Verdict], rtol: float) -> Any:
    """A two-panel figure: losses per step, and |loss - first run's loss| per step on a scale
    where 0 is drawn as 0, with the tolerance and the first differing step marked."""
    check()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    drawn: Any
    drawn, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(8, 6.5))
    reference = runs[0]
    for run in runs:
        points = [(s.index, s.loss) for s in run.steps if s.loss is not None]
        top.plot([p[0] for p in points], [p[1] for p in points], marker=".", label=run.label)
    smallest = []
    for run in runs[1:]:
        diffs = differences(reference, run)
        bottom.plot([d[0] for d in diffs], [d[1] for d in diffs], marker=".", label=run.label)
        smallest += [d[1] for d in diffs if d[1] > 0] + [rtol * d[2] for d in diffs if d[2] > 0]
    diffs = differences(reference, runs[1]) if len(runs) > 1 else []
    if diffs:
        bottom.plot(
            [d[0] for d in diffs],
            [rtol * d[2] + 1e-12 for d in diffs],
            linestyle="--",
            color="grey",
            label=f"tolerance (rtol {rtol:g})",
        )
    for verdict in verdicts:
        if verdict.step is not None and not verdict.equivalent:
            for axis in (top, bottom):
                axis.axvline(verdict.step, color="red", linestyle=":", linewidth=1.2)
            top.annotate(
                f"first difference: step {verdict.step}",
                (verdict.step, 1.0),
                xycoords=("data", "axes fraction"),
                textcoords="offset points",
                xytext=(4, -12),
                color="red",
                fontsize=8,
            )
    top.set_ylabel("loss")
    top.legend(fontsize=8)
    top.set_title(title(runs, verdicts), fontsize=8, loc="left")
    # symlog: linear around 0 (a zero difference is drawn at 0), logarithmic above
    bottom.set_yscale("symlog", linthresh=min(smallest, default=1e-12) or 1e-12)
    bottom.set_ylim(bottom=0)
    bottom.set_ylabel(f"|loss - loss of {reference.label}|")
    bottom.set_xlabel("optimizer step")
    bottom.xaxis.set_major_locator(MaxNLocator(integer=True))
    bottom.legend(fontsize=8)
    drawn.tight_layout()
    return drawn

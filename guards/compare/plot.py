"""``--plot``: the loss curves of every run and their difference to the first, per step.

matplotlib is an optional extra (``pip install 'ddplint[plot]'``), imported only here, only when
asked for.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from .merge import Run


class PlotUnavailable(Exception):
    pass


def check() -> None:
    """Fail before any run starts when matplotlib is missing."""
    if importlib.util.find_spec("matplotlib") is None:
        raise PlotUnavailable(
            "--plot needs matplotlib, which is not installed: pip install 'ddplint[plot]' "
            "(or pip install matplotlib)"
        )


def draw(runs: list[Run], path: Path) -> None:
    """Write a two-panel figure: losses per step, and |loss - first run's loss| per step."""
    check()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    figure: Any
    figure, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(7, 6))
    reference = runs[0]
    for run in runs:
        points = [(s.index, s.loss) for s in run.steps if s.loss is not None]
        top.plot([p[0] for p in points], [p[1] for p in points], marker=".", label=run.label)
    for run in runs[1:]:
        diffs = [
            (a.index, max(abs(a.loss - b.loss), 1e-12))
            for a, b in zip(reference.steps, run.steps, strict=False)
            if a.loss is not None and b.loss is not None
        ]
        bottom.plot([d[0] for d in diffs], [d[1] for d in diffs], marker=".", label=f"{run.label}")
    top.set_ylabel("loss")
    top.legend()
    top.set_title("loss per optimizer step")
    bottom.set_yscale("log")
    bottom.set_ylabel(f"|loss - loss of {reference.label}|")
    bottom.set_xlabel("optimizer step")
    bottom.xaxis.set_major_locator(MaxNLocator(integer=True))
    bottom.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)

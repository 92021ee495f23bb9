"""Text output: a step table of every run, then the verdicts."""

from __future__ import annotations

from .causes import sci
from .judge import Verdict
from .merge import Run

LETTERS = "ABCDEFGH"


def _num(value: float | None, digits: int = 6) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def lr_cell(lrs: tuple[float, ...], shown: int = 2) -> str:
    """One value when every parameter group has it, else "3 groups: 0.1,0.01,..."."""
    if not lrs:
        return "-"
    if len(set(lrs)) == 1:
        return f"{lrs[0]:g}"
    values = ",".join(f"{x:g}" for x in lrs[:shown]) + (",..." if len(lrs) > shown else "")
    return f"{len(lrs)} groups: {values}"


def lr_groups(runs: list[Run], limit: int = 5) -> list[str]:
    """The full learning rates of every parameter group, for runs whose groups differ: the first
    step and each step where they change (``limit`` lines per run)."""
    lines = []
    for letter, run in zip(LETTERS, runs, strict=False):
        if not any(len(set(s.lr)) > 1 for s in run.steps):
            continue
        changes = [s for i, s in enumerate(run.steps) if i == 0 or s.lr != run.steps[i - 1].lr]
        for step in changes[:limit]:
            values = ", ".join(f"{x:g}" for x in step.lr)
            lines.append(f"lr {letter} per param group from step {step.index}: {values}")
        if len(changes) > limit:
            lines.append(f"lr {letter}: {len(changes) - limit} more changes")
    return lines


def legend(runs: list[Run]) -> str:
    return "runs: " + ", ".join(f"{LETTERS[i]} = {r.label}" for i, r in enumerate(runs))


def table(runs: list[Run], marks: dict[int, str]) -> list[str]:
    """One row per step: batch, loss, gradient norm and learning rate of every run, and the
    largest |loss difference| to run A. ``marks`` flags rows (the first divergence)."""
    letters = "/".join(LETTERS[: len(runs)])
    columns = [f"batch {letters}", *(f"loss {LETTERS[i]}" for i in range(len(runs)))]
    columns += ["|diff|", f"grad norm {letters}", f"lr {letters}"]
    rows: list[list[str]] = [["step", *columns]]
    for index in range(min(len(r.steps) for r in runs)):
        steps = [r.steps[index] if index < len(r.steps) else None for r in runs]
        base = steps[0]
        diffs = [
            abs(s.loss - base.loss)
            for s in steps[1:]
            if s is not None and base is not None and s.loss is not None and base.loss is not None
        ]
        rows.append(
            [
                marks.get(index, "") + str(index),
                "/".join("-" if s is None else str(s.global_batch or "?") for s in steps),
                *(_num(None if s is None else s.loss) for s in steps),
                sci(max(diffs)) if diffs else "-",
                "/".join(
                    "skipped"
                    if s is not None and s.skipped
                    else _num(s.grad_norm if s else None, 5)
                    for s in steps
                ),
                " / ".join("-" if s is None else lr_cell(s.lr) for s in steps)
                if any(s is not None and len(set(s.lr)) > 1 for s in steps)
                else "/".join("-" if s is None else lr_cell(s.lr) for s in steps),
            ]
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return [
        "  ".join(
            cell.rjust(w) if i < len(row) - 1 else cell
            for i, (cell, w) in enumerate(zip(row, widths, strict=False))
        )
        for row in rows
    ]


def verdict_lines(reference: Run, other: Run, verdict: Verdict) -> list[str]:
    title = f"{other.label} vs {reference.label}: "
    first, *rest = verdict.lines
    return [title + first, *(f"  {line}" for line in rest)]


def notes(runs: list[Run]) -> list[str]:
    return [f"note ({r.label}): {n}" for r in runs for n in r.notes]

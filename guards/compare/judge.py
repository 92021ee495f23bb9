"""Compare two merged runs step by step: the first step where they diverge, and why.

Pure functions on recorded data. Two kinds of evidence:
- a defect inside one run that no single process would show (every rank consuming the same
  samples; a shuffling sampler repeating the previous epoch's order), reported even when both
  runs share it;
- the first step where the runs differ beyond tolerance, explained by what differs there.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from . import causes
from .merge import Run, Step

DEFAULT_RTOL = 1e-3


@dataclass(frozen=True)
class Verdict:
    """The outcome of one comparison; ``lines[0]`` is the headline."""

    equivalent: bool
    step: int | None  # the first step that differs or shows a defect
    lines: list[str] = field(default_factory=list)
    max_loss_diff: float = 0.0


def close(a: float | None, b: float | None, rtol: float) -> bool:
    """Equal within ``rtol`` (relative); unknown values are not evidence of a difference."""
    if a is None or b is None:
        return True
    if math.isnan(a) or math.isnan(b) or math.isinf(a) or math.isinf(b):
        return (math.isnan(a) and math.isnan(b)) or a == b
    return abs(a - b) <= rtol * max(abs(a), abs(b)) + 1e-12


def differences(a: Step, b: Step, rtol: float) -> list[str]:
    """The fields of step ``a`` and step ``b`` that differ, most telling first."""
    found = []
    if a.skipped != b.skipped:
        found.append("skipped")
    if a.batch is not None and b.batch is not None and a.batch != b.batch:
        found.append("batch")
    if a.samples is not None and b.samples is not None and a.samples != b.samples:
        found.append("samples")
    same_lr = all(close(x, y, rtol) for x, y in zip(a.lr, b.lr, strict=False))
    if len(a.lr) != len(b.lr) or not same_lr:
        found.append("lr")
    for name in ("loss", "grad_norm", "param_norm"):
        if not close(getattr(a, name), getattr(b, name), rtol):
            found.append(name)
    return found


def first_divergence(a: Run, b: Run, rtol: float) -> tuple[int, list[str]] | None:
    for sa, sb in zip(a.steps, b.steps, strict=False):
        found = differences(sa, sb, rtol)
        if found:
            return sa.index, found
    shorter = a if len(a.steps) < len(b.steps) else b
    if len(a.steps) != len(b.steps) and not shorter.limited:
        return len(shorter.steps), ["count"]
    return None


def max_loss_difference(a: Run, b: Run) -> float:
    diffs = [
        abs(sa.loss - sb.loss)
        for sa, sb in zip(a.steps, b.steps, strict=False)
        if sa.loss is not None and sb.loss is not None
    ]
    return max(diffs, default=0.0)


def judge(a: Run, b: Run, rtol: float = DEFAULT_RTOL) -> Verdict:
    """Run ``b`` against the reference ``a``."""
    worst = max_loss_difference(a, b)
    defects = sorted(causes.defects(a) + causes.defects(b), key=lambda d: d.step)
    divergence = first_divergence(a, b, rtol)
    if defects and (divergence is None or defects[0].step <= divergence[0]):
        first = defects[0]
        return Verdict(False, first.step, [first.headline, *first.lines], worst)
    if divergence is not None:
        step, fields = divergence
        headline, lines = causes.explain(a, b, step, fields, rtol)
        return Verdict(False, step, [headline, *lines], worst)
    return Verdict(True, None, causes.equivalent(a, b, worst), worst)

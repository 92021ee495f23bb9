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
from .defects import defects, vacuous
from .merge import Run, Step

DEFAULT_RTOL = 1e-3


@dataclass(frozen=True)
class Verdict:
    """The outcome of one comparison; ``lines[0]`` is the headline."""

    equivalent: bool
    step: int | None  # the first step that differs or shows a defect
    lines: list[str] = field(default_factory=list)
    max_loss_diff: float = 0.0
    inconclusive: bool = False  # the runs agree, but their values could not differ


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
    if causes.same_batch(a, b) is False:
        found.append("batch")
    same = causes.same_samples(a, b)
    if same is False:
        found.append("samples")
    elif same and causes.same_inputs(a, b) is False and not close(a.loss, b.loss, rtol):
        found.append("inputs")  # by index the same, by content not, and the losses differ
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


SHOWN = {"batch", "lr", "skipped"}  # certain, and in the table
CERTAIN = SHOWN | {"samples", "inputs", "count"}


def _rank(fields: list[str] | None) -> int:
    """0: a certain fact shown in the table; 1: a certain fact (a defect is one); 2: values."""
    if fields is None:
        return 1
    return 0 if SHOWN & set(fields) else 1 if CERTAIN & set(fields) else 2


def judge(a: Run, b: Run, rtol: float = DEFAULT_RTOL) -> Verdict:
    """Run ``b`` against the reference ``a``. The earliest cause is named first; at one step a
    certain fact shown in the table before a defect, and a defect before values that differ."""
    worst = max_loss_difference(a, b)
    found: list[tuple[int, int, list[str]]] = []  # (step, rank, lines)
    kinds = set()
    for defect in sorted(defects(a) + defects(b), key=lambda d: d.step):
        if defect.kind not in kinds:  # the same defect in both runs: the first one
            kinds.add(defect.kind)
            found.append((defect.step, 1, [defect.headline, *defect.lines]))
    divergence = first_divergence(a, b, rtol)
    if divergence is not None:
        step, fields = divergence
        headline, lines = causes.explain(a, b, step, fields, rtol)
        found.append((step, _rank(fields), [headline, *lines]))
    empty = vacuous(a, b)
    if found:
        found.sort(key=lambda item: (item[0], item[1]))
        step, _, lines = found[0]
        also = [f"also: {other[2][0].removeprefix('not equivalent: ')}" for other in found[1:]]
        if empty:
            also.append(f"also: {' and '.join(empty)} in both runs: comparing them says nothing")
        return Verdict(False, step, [*lines, *also], worst)
    if empty:
        return Verdict(
            False,
            None,
            [
                f"inconclusive: {' and '.join(empty)} in both runs: values that could not have "
                "differed agree, which says nothing about the training",
                "check the loss the script computes (a single-class cross-entropy, for one, is "
                "always 0) and that the model has parameters that receive gradients",
                *causes.other_inputs(a, b),
            ],
            worst,
            inconclusive=True,
        )
    return Verdict(True, None, causes.equivalent(a, b, worst), worst)

"""Apply the text edits of fixes to a source, as `--fix` does."""

from __future__ import annotations

from collections.abc import Iterable

from ddplint.diagnostics import Applicability, Diagnostic, Edit, Fix, Location


def applicable(diagnostic: Diagnostic, unsafe: bool) -> bool:
    fix = diagnostic.fix
    return fix is not None and (unsafe or fix.applicability is Applicability.SAFE)


def _offsets(source: str) -> list[int]:
    starts = [0]
    for line in source.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    return starts


def _offset(starts: list[int], where: Location) -> int:
    return starts[where.row - 1] + where.column - 1


def apply_fixes(source: str, fixes: Iterable[Fix]) -> tuple[str, list[Fix]]:
    """Apply non-overlapping fixes in order; a fix overlapping an applied one waits for
    the next pass. Returns the new source and the fixes applied."""
    starts = _offsets(source)
    taken: list[tuple[int, int]] = []
    chosen: list[tuple[int, int, Edit]] = []
    applied: list[Fix] = []
    for fix in fixes:
        spans = [(_offset(starts, e.start), _offset(starts, e.end), e) for e in fix.edits]
        if any(_overlaps(a, b, taken) for a, b, _ in spans):
            continue
        taken.extend((a, b) for a, b, _ in spans)
        chosen.extend(spans)
        applied.append(fix)
    for start, end, edit in sorted(chosen, key=lambda s: (s[0], s[1]), reverse=True):
        source = source[:start] + edit.content + source[end:]
    return source, applied


def _overlaps(start: int, end: int, taken: list[tuple[int, int]]) -> bool:
    for a, b in taken:
        if start < b and a < end:
            return True
        if start == end == a == b:  # two insertions at one point: order is ambiguous
            return True
    return False

"""Apply the text edits of fixes to a source, as `--fix` does."""

from __future__ import annotations

import re
from collections.abc import Iterable

from ddplint.diagnostics import Applicability, Diagnostic, Edit, Fix, Location
from ddplint.source import line_starts

_BARE_LF = re.compile(r"(?<!\r)\n")


def applicable(diagnostic: Diagnostic, unsafe: bool) -> bool:
    fix = diagnostic.fix
    return fix is not None and (unsafe or fix.applicability is Applicability.SAFE)


def is_safe_fix(diagnostic: Diagnostic) -> bool:
    """Whether `--fix` applies this finding's fix without `--unsafe-fixes`."""
    return applicable(diagnostic, unsafe=False)


def _offset(starts: list[int], where: Location) -> int:
    return starts[min(where.row, len(starts)) - 1] + where.column - 1


def apply_fixes(source: str, fixes: Iterable[Fix], newline: str = "\n") -> tuple[str, list[Fix]]:
    """Apply non-overlapping fixes in order; a fix overlapping an applied one waits for
    the next pass. Lines that fixes add end with `newline`, the file's own line ending.
    Returns the new source and the fixes applied."""
    starts = line_starts(source)
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
        content = edit.content if newline == "\n" else _BARE_LF.sub(newline, edit.content)
        source = source[:start] + content + source[end:]
    return source, applied


def _overlaps(start: int, end: int, taken: list[tuple[int, int]]) -> bool:
    for a, b in taken:
        if start < b and a < end:
            return True
        if start == end == a == b:  # two insertions at one point: order is ambiguous
            return True
    return False

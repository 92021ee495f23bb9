"""Where findings land in a test source: the rows a rule reports, the row of a line."""

from __future__ import annotations

from ddplint.api import lint_source


def rows(source: str, code: str) -> list[int]:
    """The rows `code` reports in `source`, in order."""
    return [d.start.row for d in lint_source(source, select=[code])]


def line_of(source: str, needle: str) -> int:
    """The row of the first line of `source` that contains `needle`."""
    for number, line in enumerate(source.splitlines(), start=1):
        if needle in line:
            return number
    raise AssertionError(f"{needle!r} not in source")

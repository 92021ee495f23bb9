"""`--output-format full`: each finding with the source lines around it, the span underlined,
and the fix it offers, laid out as ruff's `full` format lays out its findings."""

from __future__ import annotations

from collections.abc import Sequence

from ddplint.diagnostics import Applicability, Diagnostic
from ddplint.source import decode, split_lines

CONTEXT = 2  # lines shown before and after the finding's line
_TAB = "    "


def render(diagnostics: Sequence[Diagnostic]) -> str:
    lines: dict[str, list[str] | None] = {}
    blocks = []
    for d in diagnostics:
        if d.path not in lines:
            lines[d.path] = _read_lines(d.path)
        blocks.append(finding(d, lines[d.path]))
    return "".join(blocks)


def finding(diagnostic: Diagnostic, source: list[str] | None) -> str:
    """One finding: header, location, source excerpt (when the file is readable), fix."""
    d = diagnostic
    fix = d.fix
    marker = "[*] " if fix is not None and fix.applicability is Applicability.SAFE else ""
    shown = _context_rows(d.start.row, source) if source else []
    width = len(str(shown[-1])) if shown else 1
    out = [
        f"{d.code} {marker}{d.message}\n",
        f"{' ' * width}--> {d.path}:{d.start.row}:{d.start.column}\n",
    ]
    if source and shown:
        gutter = " " * width + " |"
        out.append(gutter + "\n")
        for row in shown:
            text = source[row - 1]
            out.append(f"{row:>{width}} | {text.replace(chr(9), _TAB)}".rstrip(" ") + "\n")
            if row == d.start.row:
                out.append(f"{gutter} {_underline(d, text)}\n")
        out.append(gutter + "\n")
    if fix is not None:
        unsafe = fix.applicability is Applicability.UNSAFE
        note = " (an unsafe fix: `--unsafe-fixes` applies it)" if unsafe else ""
        out.append(f"help: {fix.message}{note}\n")
    return "".join(out) + "\n"


def _context_rows(row: int, source: list[str]) -> list[int]:
    """The rows to show: the finding's row and up to CONTEXT rows each side, without blank
    rows at either edge."""
    if not 1 <= row <= len(source):
        return []
    rows = list(range(max(1, row - CONTEXT), min(len(source), row + CONTEXT) + 1))
    while rows[0] != row and not source[rows[0] - 1].strip():
        rows.pop(0)
    while rows[-1] != row and not source[rows[-1] - 1].strip():
        rows.pop()
    return rows


def _underline(diagnostic: Diagnostic, text: str) -> str:
    """Carets under the span on its first line (at least one), tabs widened as in the line."""
    start = diagnostic.start.column - 1
    one_line = diagnostic.end.row == diagnostic.start.row
    end = diagnostic.end.column - 1 if one_line else len(text.rstrip())
    lead = text[:start].replace("\t", _TAB)
    span = text[start:end].replace("\t", _TAB)
    return " " * len(lead) + "^" * max(1, len(span))


def _read_lines(path: str) -> list[str] | None:
    try:
        with open(path, "rb") as handle:
            decoded = decode(handle.read())
    except OSError:
        return None
    return split_lines(decoded.text) if decoded.text is not None else None

"""`path:line:col: DDP005 [*] message`, one line a finding."""

from __future__ import annotations

from collections.abc import Sequence

from ddplint.diagnostics import Diagnostic


def line(diagnostic: Diagnostic) -> str:
    marker = "[*] " if diagnostic.fix is not None else ""
    return (
        f"{diagnostic.path}:{diagnostic.start.row}:{diagnostic.start.column}: "
        f"{diagnostic.code} {marker}{diagnostic.message}"
    )


def render(diagnostics: Sequence[Diagnostic]) -> str:
    return "".join(line(d) + "\n" for d in diagnostics)

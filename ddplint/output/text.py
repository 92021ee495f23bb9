"""`path:line:col: DDP005 [*] message`, one line a finding; `[*]` marks a fix that `--fix`
applies on its own (a safe one), as ruff marks them; `[preview]` marks an unproven finding
(shown only with `--preview`)."""

from __future__ import annotations

from collections.abc import Sequence

from ddplint.diagnostics import Applicability, Diagnostic


def line(diagnostic: Diagnostic) -> str:
    fix = diagnostic.fix
    marker = "[*] " if fix is not None and fix.applicability is Applicability.SAFE else ""
    if diagnostic.unproven:
        marker = f"[preview] {marker}"
    return (
        f"{diagnostic.path}:{diagnostic.start.row}:{diagnostic.start.column}: "
        f"{diagnostic.code} {marker}{diagnostic.message}"
    )


def render(diagnostics: Sequence[Diagnostic]) -> str:
    return "".join(line(d) + "\n" for d in diagnostics)

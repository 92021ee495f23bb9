"""GitHub Actions workflow commands: one annotation a finding."""

from __future__ import annotations

from collections.abc import Sequence

from ddplint.diagnostics import Diagnostic, Severity

_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def _escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(value: str) -> str:
    return _escape_data(value).replace(":", "%3A").replace(",", "%2C")


def render(diagnostics: Sequence[Diagnostic]) -> str:
    lines = []
    for d in diagnostics:
        properties = ",".join(
            f"{name}={_escape_property(str(value))}"
            for name, value in (
                ("title", f"ddplint ({d.code})"),
                ("file", d.path),
                ("line", d.start.row),
                ("col", d.start.column),
                ("endLine", d.end.row),
                ("endColumn", d.end.column),
            )
        )
        tag = "[preview] " if d.unproven else ""
        message = f"{d.path}:{d.start.row}:{d.start.column}: {d.code} {tag}{d.message}"
        level = "notice" if d.unproven else _LEVEL[d.severity]
        lines.append(f"::{level} {properties}::{_escape_data(message)}\n")
    return "".join(lines)

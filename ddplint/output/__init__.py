"""Formatters: each turns a run's diagnostics into what one consumer reads."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ddplint.diagnostics import Diagnostic
from ddplint.output import github, json_format, sarif, text

Formatter = Callable[[Sequence[Diagnostic]], str]

FORMATTERS: dict[str, Formatter] = {
    "text": text.render,
    "json": json_format.render,
    "sarif": sarif.render,
    "github": github.render,
}

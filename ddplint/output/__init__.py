"""Formatters: each turns a run's diagnostics into what one consumer reads.

A formatter's module is imported only when its format is asked for, so that starting
`ddplint` pays for none of them."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from ddplint.diagnostics import Diagnostic

Formatter = Callable[[Sequence["Diagnostic"]], str]

# format name -> module of ddplint.output that renders it. `text` is the name the default has
# always had; `concise` (the same output) and `full` are ruff's names.
_MODULES = {
    "concise": "text",
    "full": "full",
    "github": "github",
    "json": "json_format",
    "sarif": "sarif",
    "text": "text",
}
FORMATS = tuple(sorted(_MODULES))
# The formats a person reads: the summary follows them, and `--statistics` prints its table.
TEXT_FORMATS = frozenset({"concise", "full", "text"})


def formatter(name: str) -> Formatter:
    """The formatter of the format `name` (one of FORMATS)."""
    module = importlib.import_module(f"ddplint.output.{_MODULES[name]}")
    return cast("Formatter", module.render)

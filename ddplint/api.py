"""Library entry points: lint or fix a source string without the CLI."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ddplint.checker import FileResult, check_file
from ddplint.diagnostics import Diagnostic
from ddplint.fixing import fix_text
from ddplint.rule import all_rules
from ddplint.source import first_newline


def _check(path: str, codes: list[str]) -> Callable[[str], FileResult]:
    def check(source: str) -> FileResult:
        result = check_file(path, source.encode("utf-8"), codes)
        if result.internal_errors:
            raise RuntimeError("; ".join(result.internal_errors))
        return result

    return check


def lint_source(
    source: str, path: str = "train.py", select: Iterable[str] | None = None
) -> list[Diagnostic]:
    """Diagnostics for one source text (all rules unless `select` names codes)."""
    codes = list(select) if select is not None else list(all_rules())
    return _check(path, codes)(source).diagnostics


def fix_source(
    source: str,
    path: str = "train.py",
    unsafe: bool = False,
    select: Iterable[str] | None = None,
) -> str:
    """The source with every applicable fix applied, pass after pass until stable, as
    `ddplint check --fix` does."""
    codes = list(select) if select is not None else list(all_rules())
    check = _check(path, codes)
    found = check(source).diagnostics
    return fix_text(path, source, found, check, unsafe, first_newline(source)).fixed

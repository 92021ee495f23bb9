"""Library entry points: lint or fix a source string without the CLI."""

from __future__ import annotations

from collections.abc import Iterable

from ddplint.checker import check_file
from ddplint.diagnostics import Diagnostic
from ddplint.fixer import applicable, apply_fixes
from ddplint.rule import all_rules

MAX_FIX_PASSES = 20


def lint_source(
    source: str, path: str = "train.py", select: Iterable[str] | None = None
) -> list[Diagnostic]:
    """Diagnostics for one source text (all rules unless `select` names codes)."""
    codes = list(select) if select is not None else list(all_rules())
    result = check_file(path, source.encode("utf-8"), codes)
    if result.internal_errors:
        raise RuntimeError("; ".join(result.internal_errors))
    return result.diagnostics


def fix_source(
    source: str,
    path: str = "train.py",
    unsafe: bool = False,
    select: Iterable[str] | None = None,
) -> str:
    """The source with every applicable fix applied, pass after pass until stable."""
    codes = list(select) if select is not None else None
    for _ in range(MAX_FIX_PASSES):
        fixes = [d.fix for d in lint_source(source, path, codes) if applicable(d, unsafe)]
        if not fixes:
            break
        source, applied = apply_fixes(source, [f for f in fixes if f is not None])
        if not applied:
            break
    return source

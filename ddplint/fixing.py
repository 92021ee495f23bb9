"""`--fix` and `--diff`: apply fixes to files, pass after pass, and show what changed."""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ddplint.checker import FileResult, check_file
from ddplint.diagnostics import Diagnostic, Fix
from ddplint.fixer import applicable, apply_fixes
from ddplint.project.queries import Project
from ddplint.source import SourceText, decode, split_lines

MAX_PASSES = 20


@dataclass
class FixOutcome:
    """One file after fixing: its new text, the fixes applied and what remains."""

    path: str
    original: str
    fixed: str
    source: SourceText = field(default_factory=lambda: SourceText(""))
    applied: list[tuple[str, Fix]] = field(default_factory=list)
    remaining: list[Diagnostic] = field(default_factory=list)
    internal_errors: list[str] = field(default_factory=list)

    def fixed_bytes(self) -> bytes:
        """The fixed file as it is written back: in the file's encoding, with its BOM."""
        return self.source.encode(self.fixed)

    def diff(self) -> str:
        import difflib  # only `--diff` asks: kept out of every check's start-up

        return "".join(
            difflib.unified_diff(
                split_lines(self.original, keepends=True),
                split_lines(self.fixed, keepends=True),
                fromfile=self.path if os.path.isabs(self.path) else f"a/{self.path}",
                tofile=self.path if os.path.isabs(self.path) else f"b/{self.path}",
            )
        )


def fix_files(
    diagnostics: Sequence[Diagnostic],
    codes_for: Callable[[str], set[str]],
    project: Project | None,
    unsafe: bool,
) -> tuple[list[FixOutcome], list[Diagnostic]]:
    """Fix every file that has applicable fixes; returns the outcomes and the diagnostics
    of files that had nothing to fix."""
    by_file: dict[str, list[Diagnostic]] = defaultdict(list)
    for diagnostic in diagnostics:
        by_file[diagnostic.path].append(diagnostic)
    outcomes: list[FixOutcome] = []
    untouched: list[Diagnostic] = []
    for path, found in by_file.items():
        if not any(applicable(d, unsafe) for d in found):
            untouched.extend(found)
            continue
        outcomes.append(_fix_file(path, found, codes_for(path), project, unsafe))
    return outcomes, untouched


def _fix_file(
    path: str,
    found: list[Diagnostic],
    codes: set[str],
    project: Project | None,
    unsafe: bool,
) -> FixOutcome:
    try:
        source = decode(Path(path).read_bytes())
    except OSError as exc:
        error = f"cannot read {path} to fix it: {exc.strerror or exc}"
        return FixOutcome(path, "", "", remaining=found, internal_errors=[error])
    if source.text is None:
        return FixOutcome(path, "", "", remaining=found)
    outcome = fix_text(
        path,
        source.text,
        found,
        lambda text: check_file(path, source.encode(text), codes, project),
        unsafe,
        source.newline,
    )
    outcome.source = source
    return outcome


def fix_text(
    path: str,
    original: str,
    found: list[Diagnostic],
    check: Callable[[str], FileResult],
    unsafe: bool,
    newline: str = "\n",
) -> FixOutcome:
    """Apply the applicable fixes of `found`, re-check with `check`, and repeat until
    nothing more applies (at most MAX_PASSES times). Added lines end with `newline`."""
    outcome = FixOutcome(path, original, original, remaining=found)
    for _ in range(MAX_PASSES):
        fixable = [d for d in outcome.remaining if applicable(d, unsafe)]
        if not fixable:
            break
        fixed, applied = apply_fixes(outcome.fixed, [d.fix for d in fixable if d.fix], newline)
        if not applied:
            break
        codes_of = {id(d.fix): d.code for d in fixable}
        outcome.applied.extend((codes_of[id(f)], f) for f in applied)
        result = check(fixed)
        outcome.fixed = fixed
        outcome.remaining = result.diagnostics
        outcome.internal_errors = result.internal_errors
    return outcome

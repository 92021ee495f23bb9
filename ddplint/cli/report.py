"""What `ddplint check` prints: findings in the chosen format, statistics, the summary."""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, TextIO

from ddplint.diagnostics import Diagnostic
from ddplint.fixer import applicable, is_safe_fix
from ddplint.fixing import FixOutcome
from ddplint.output import TEXT_FORMATS, formatter
from ddplint.rule import all_rules
from ddplint.rule_docs import FILE_ERROR_NAME

if TYPE_CHECKING:
    from ddplint.cli.options import CheckOptions


class ReportError(OSError):
    """The output file could not be written."""


def statistics_rows(diagnostics: Sequence[Diagnostic]) -> list[tuple[int, str, str, bool]]:
    """(count, code, rule name, safely fixable) per code, most frequent first."""
    counts = Counter(d.code for d in diagnostics)
    fixable = {d.code for d in diagnostics if is_safe_fix(d)}
    rules = all_rules()
    return [
        (count, code, rules[code].name if code in rules else FILE_ERROR_NAME, code in fixable)
        for code, count in sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    ]


def statistics(diagnostics: Sequence[Diagnostic], output_format: str) -> str:
    rows = statistics_rows(diagnostics)
    if output_format == "json":
        table = [
            {"code": code, "name": name, "count": count, "fixable": fixable}
            for count, code, name, fixable in rows
        ]
        return json.dumps(table, indent=2) + "\n"
    return "".join(
        f"{count:>5}\t{code}\t{'[*]' if fixable else '   '} {name}\n"
        for count, code, name, fixable in rows
    )


def report(
    options: CheckOptions,
    diagnostics: list[Diagnostic],
    changed: list[FixOutcome],
    files: int,
    failed: bool,
    hidden: int = 0,
) -> None:
    """Print or write the findings, then the summary (text output only).

    `failed`: a path or file could not be checked; then no "All checks passed!".
    `hidden`: unproven findings left out (no `--preview`)."""
    if options.diff:
        return
    if options.statistics:
        rendered = statistics(diagnostics, options.output_format)
    else:
        rendered = formatter(options.output_format)(diagnostics)
    if options.output_file is not None:
        try:
            options.output_file.parent.mkdir(parents=True, exist_ok=True)
            options.output_file.write_text(rendered, encoding="utf-8")
        except OSError as exc:
            raise ReportError(
                f"cannot write the output file {options.output_file}: {exc.strerror or exc}"
            ) from exc
    else:
        sys.stdout.write(rendered)
    if options.quiet or options.output_format not in TEXT_FORMATS:
        return
    summary = sys.stdout if options.output_file is None else sys.stderr
    _summary(options, diagnostics, changed, files, failed, summary)
    if hidden:
        print(
            f"{hidden} more unproven finding{'s' * (hidden != 1)} hidden; `--preview` shows them.",
            file=summary,
        )


def _summary(
    options: CheckOptions,
    diagnostics: list[Diagnostic],
    changed: list[FixOutcome],
    files: int,
    failed: bool,
    out: TextIO,
) -> None:
    fixed = sum(len(o.applied) for o in changed)
    checked = f"{files} file{'s' * (files != 1)} checked"
    if options.show_fixes and changed:
        print(f"Fixed {fixed} finding{'s' * (fixed != 1)}:", file=out)
        for outcome in changed:
            for code, fix in outcome.applied:
                print(f"- {outcome.path}: {code} {fix.message}", file=out)
    if not diagnostics:
        if not failed:
            suffix = f" ({fixed} fixed)" if fixed else ""
            print(f"All checks passed! {checked}{suffix}.", file=out)
        return
    count = len(diagnostics)
    noun = "finding" if count == 1 else "findings"
    if fixed:
        print(f"Found {count + fixed} {noun} ({fixed} fixed, {count} remaining).", file=out)
    else:
        print(f"Found {count} {noun} in {checked}.", file=out)
    safe = sum(1 for d in diagnostics if is_safe_fix(d))
    unsafe = sum(1 for d in diagnostics if applicable(d, unsafe=True)) - safe
    if safe:
        print(f"[*] {safe} fixable with the `--fix` option.", file=out)
    if unsafe:
        print(
            f"{unsafe} hidden fix{'es' * (unsafe != 1)} can be enabled with the "
            "`--unsafe-fixes` option.",
            file=out,
        )

"""`ddplint check`: find the files, run the rules, fix, report, and choose the exit code."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from pathlib import Path

import pathspec

from ddplint.cache import Cache
from ddplint.cli.exit_codes import EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS
from ddplint.cli.options import CheckOptions
from ddplint.cli.report import ReportError, report
from ddplint.config import Config, ConfigError, discover
from ddplint.diagnostics import Diagnostic
from ddplint.discovery import DEFAULT_EXCLUDE, Excluder, MissingPathError
from ddplint.discovery import discover as discover_files
from ddplint.fixing import FixOutcome, fix_files
from ddplint.parsing import PARSE_ERROR_CODE
from ddplint.runner import importers, run
from ddplint.selection import SelectorError, expand, resolve

STATISTICS_FORMATS = ("text", "concise", "full", "json")


class UsageError(ValueError):
    """Options that cannot work together, or an output file that cannot be written."""


def codes(values: Iterable[str] | None) -> list[str] | None:
    """`("DDP005,DDP006", "DDP01")` -> `["DDP005", "DDP006", "DDP01"]`."""
    if values is None:
        return None
    return [code.strip() for value in values for code in value.split(",") if code.strip()]


class Selection:
    """The codes in force for each file: global selection minus per-file ignores."""

    def __init__(self, config: Config, options: CheckOptions) -> None:
        where = {key: config.where(key) for key in ("select", "ignore", "extend-select")}
        cli_select = codes(options.select)
        if cli_select is not None:
            where["select"] = "--select"
        cli_extend = codes(options.extend_select) or []
        cli_ignore = codes(options.ignore) or []
        for selector in cli_extend:
            expand(selector, "--extend-select")
        for selector in cli_ignore:
            expand(selector, "--ignore")
        self.codes = resolve(
            cli_select if cli_select is not None else config.select,
            [*config.ignore, *cli_ignore],
            [*config.extend_select, *cli_extend],
            where,
        )
        self.root = config.root
        self.per_file = [
            (
                pathspec.GitIgnoreSpec.from_lines([pattern]),
                set().union(*(expand(c, config.where("per-file-ignores")) for c in selectors)),
            )
            for pattern, selectors in config.per_file_ignores.items()
        ]

    def __call__(self, path: Path | str) -> set[str]:
        if not self.per_file:
            return self.codes
        absolute = Path(os.path.abspath(path))
        try:
            relative = absolute.relative_to(self.root).as_posix()
        except ValueError:
            relative = absolute.as_posix()
        chosen = set(self.codes)
        for spec, ignored in self.per_file:
            if spec.match_file(relative) or spec.match_file(absolute.name):
                chosen -= ignored
        return chosen

    def keep(self, diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
        """Drop DDP999 findings where an ignore turned DDP999 off."""
        return [d for d in diagnostics if d.code != PARSE_ERROR_CODE or d.code in self(d.path)]


def run_check(options: CheckOptions) -> int:
    """Run `ddplint check` and return its exit code; errors go to stderr, one line each."""
    try:
        return _check(options)
    except (ConfigError, SelectorError, UsageError) as exc:
        _error(str(exc))
        return EXIT_ERROR


def _error(message: str) -> None:
    print(f"ddplint: error: {message}", file=sys.stderr)


def _validate(options: CheckOptions) -> None:
    if options.statistics and options.output_format not in STATISTICS_FORMATS:
        raise UsageError(
            f"--statistics works with --output-format text or json, not {options.output_format}"
        )
    target = options.output_file
    if target is not None and target.is_dir():
        raise UsageError(f"--output-file {target}: is a folder; name a file to write")


def _check(options: CheckOptions) -> int:
    _validate(options)
    paths = list(options.paths) or [Path(".")]
    first = paths[0] if paths[0].is_dir() else paths[0].parent
    config = discover(first if first.exists() else Path("."), options.config, options.isolated)
    selection = Selection(config, options)
    if options.exclude is not None:
        exclude = list(options.exclude)
    elif config.exclude is not None:
        exclude = config.exclude
    else:
        exclude = list(DEFAULT_EXCLUDE)
    excluder = Excluder.build(
        config.root, [*exclude, *config.extend_exclude, *options.extend_exclude]
    )
    errors: list[str] = []
    files: list[Path] = []
    for path in paths:
        try:
            files.extend(
                discover_files(
                    [path],
                    excluder,
                    not options.no_respect_gitignore,
                    options.force_exclude,
                    errors.append,
                )
            )
        except MissingPathError as exc:
            errors.append(str(exc))
    cache = Cache(None if options.no_cache else config.root)
    if options.check_importers:  # pre-commit: a staged helper is checked where it is called
        files += discover_files(importers(files, cache), excluder, False, True, errors.append)
    result = run(files, selection, cache, options.jobs)
    found = selection.keep(result.diagnostics)
    preview = options.preview or config.preview
    diagnostics, hidden = _shown(found, preview)
    errors += result.internal_errors
    changed: list[FixOutcome] = []
    if options.fix or options.diff:
        outcomes, untouched = fix_files(
            diagnostics, selection, result.project, options.unsafe_fixes
        )
        errors += [e for o in outcomes for e in o.internal_errors]
        changed = [o for o in outcomes if o.fixed != o.original]
        not_written: set[str] = set()
        if options.diff:
            sys.stdout.write("".join(o.diff() for o in changed))
        else:
            not_written = {o.path for o in changed if not _write_fixed(o, errors)}
            changed = [o for o in changed if o.path not in not_written]
        rechecked = {o.path for o in outcomes if o.path not in not_written}
        remaining = [
            *untouched,
            *(d for o in outcomes if o.path in rechecked for d in o.remaining),
            *(d for d in diagnostics if d.path in not_written),  # as found: not fixed
            *(d for d in found if hidden and d.unproven and d.path not in rechecked),
        ]
        diagnostics = sorted(selection.keep(remaining), key=lambda d: d.sort_key)
        diagnostics, hidden = _shown(diagnostics, preview)
    try:
        report(options, diagnostics, changed, result.files, failed=bool(errors), hidden=hidden)
    except ReportError as exc:
        errors.append(str(exc))
    for message in errors:
        _error(message)
    if errors:
        return EXIT_ERROR
    if options.diff:
        return EXIT_FINDINGS if changed else EXIT_CLEAN
    if diagnostics and not options.exit_zero:
        return EXIT_FINDINGS
    return EXIT_CLEAN


def _shown(diagnostics: list[Diagnostic], preview: bool) -> tuple[list[Diagnostic], int]:
    """The findings to report, and how many unproven ones are hidden (none with preview)."""
    if preview:
        return diagnostics, 0
    shown = [d for d in diagnostics if not d.unproven]
    return shown, len(diagnostics) - len(shown)


def _write_fixed(outcome: FixOutcome, errors: list[str]) -> bool:
    """Write a fixed file back in its own encoding, BOM and line endings."""
    try:
        Path(outcome.path).write_bytes(outcome.fixed_bytes())
    except UnicodeEncodeError as exc:
        errors.append(
            f"{outcome.path}: not fixed: the fix holds characters that {exc.encoding} cannot encode"
        )
        return False
    except OSError as exc:
        errors.append(f"{outcome.path}: cannot write the fixed file: {exc.strerror or exc}")
        return False
    return True

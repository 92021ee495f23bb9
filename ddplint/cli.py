"""The `ddplint` command: `check`, `rule`, `rules`."""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import pathspec

from ddplint import __version__, rule_docs
from ddplint.cache import Cache
from ddplint.config import Config, ConfigError, discover
from ddplint.diagnostics import Diagnostic
from ddplint.discovery import Excluder, MissingPathError
from ddplint.discovery import discover as discover_files
from ddplint.fixer import applicable
from ddplint.fixing import FixOutcome, fix_files
from ddplint.output import FORMATTERS
from ddplint.rule import all_rules
from ddplint.runner import run
from ddplint.selection import SelectorError, expand, resolve

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def _codes(values: list[str] | None) -> list[str] | None:
    if values is None:
        return None
    return [code.strip() for value in values for code in value.split(",") if code.strip()]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ddplint",
        description="Find PyTorch DistributedDataParallel pitfalls before they cost a run.",
    )
    parser.add_argument("--version", action="version", version=f"ddplint {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    check = commands.add_parser("check", help="check files or folders (default: .)")
    check.add_argument("paths", nargs="*", type=Path, metavar="PATH")
    selection = check.add_argument_group("rule selection")
    selection.add_argument(
        "--select",
        action="append",
        metavar="CODES",
        help="comma-separated codes or prefixes to enable (replaces config)",
    )
    selection.add_argument(
        "--ignore", action="append", metavar="CODES", help="codes or prefixes to disable"
    )
    selection.add_argument(
        "--extend-select",
        action="append",
        metavar="CODES",
        help="codes or prefixes to enable on top of the selection",
    )
    files = check.add_argument_group("file selection")
    files.add_argument(
        "--exclude",
        action="append",
        metavar="PATTERN",
        help="gitignore-style patterns to skip (replaces config exclude)",
    )
    files.add_argument(
        "--extend-exclude", action="append", metavar="PATTERN", help="more patterns to skip"
    )
    files.add_argument(
        "--force-exclude",
        action="store_true",
        help="apply exclusions to files named on the command line too",
    )
    files.add_argument(
        "--no-respect-gitignore",
        action="store_true",
        help="also check files that .gitignore ignores",
    )
    config = check.add_argument_group("configuration")
    config.add_argument(
        "--config",
        type=Path,
        metavar="FILE",
        help="pyproject.toml to read instead of the nearest one",
    )
    config.add_argument("--isolated", action="store_true", help="ignore all configuration")
    fixes = check.add_argument_group("fixes")
    fixes.add_argument("--fix", action="store_true", help="apply safe fixes")
    fixes.add_argument(
        "--unsafe-fixes", action="store_true", help="with --fix or --diff, apply unsafe fixes too"
    )
    fixes.add_argument(
        "--diff",
        action="store_true",
        help="print the fixes as a diff without writing (exit 1 if any)",
    )
    fixes.add_argument("--show-fixes", action="store_true", help="list the fixes applied")
    output = check.add_argument_group("output")
    output.add_argument("--output-format", choices=sorted(FORMATTERS), default="text")
    output.add_argument("-o", "--output-file", type=Path, metavar="FILE")
    output.add_argument(
        "-q", "--quiet", action="store_true", help="print findings only, no summary"
    )
    output.add_argument("--statistics", action="store_true", help="count findings per rule")
    output.add_argument(
        "--exit-zero", action="store_true", help="exit 0 even when there are findings"
    )
    run_group = check.add_argument_group("run")
    run_group.add_argument(
        "--no-cache", action="store_true", help="neither read nor write the cache"
    )
    run_group.add_argument(
        "--jobs",
        type=int,
        default=None,
        metavar="N",
        help="processes to use (default: one per core)",
    )

    explain = commands.add_parser("rule", help="explain one rule")
    explain.add_argument("code", metavar="CODE")
    commands.add_parser("rules", help="list every rule")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "rule":
        rule = all_rules().get(args.code.upper())
        if rule is None:
            print(
                f"ddplint: error: unknown rule {args.code!r}; see `ddplint rules`", file=sys.stderr
            )
            return EXIT_ERROR
        sys.stdout.write(rule_docs.render(rule))
        return EXIT_CLEAN
    if args.command == "rules":
        sys.stdout.write(rule_docs.table())
        return EXIT_CLEAN
    if args.command != "check":
        parser.print_help(sys.stderr)
        return EXIT_ERROR
    try:
        return _check(args)
    except (ConfigError, SelectorError) as exc:
        print(f"ddplint: error: {exc}", file=sys.stderr)
        return EXIT_ERROR


class _Selection:
    """The codes in force for each file: global selection minus per-file ignores."""

    def __init__(self, config: Config, args: argparse.Namespace) -> None:
        where = {key: config.where(key) for key in ("select", "ignore", "extend-select")}
        cli_select = _codes(args.select)
        if cli_select is not None:
            where["select"] = "--select"
        extend = [*config.extend_select, *(_codes(args.extend_select) or [])]
        ignore = [*config.ignore, *(_codes(args.ignore) or [])]
        for selector in _codes(args.extend_select) or []:
            expand(selector, "--extend-select")
        for selector in _codes(args.ignore) or []:
            expand(selector, "--ignore")
        self.codes = resolve(
            cli_select if cli_select is not None else config.select, ignore, extend, where
        )
        self.root = config.root
        self.per_file = [
            (
                pathspec.GitIgnoreSpec.from_lines([pattern]),
                set().union(*(expand(c, config.where("per-file-ignores")) for c in codes)),
            )
            for pattern, codes in config.per_file_ignores.items()
        ]

    def __call__(self, path: Path | str) -> set[str]:
        if not self.per_file:
            return self.codes
        absolute = Path(os.path.abspath(path))
        try:
            relative = absolute.relative_to(self.root).as_posix()
        except ValueError:
            relative = absolute.as_posix()
        codes = set(self.codes)
        for spec, ignored in self.per_file:
            if spec.match_file(relative) or spec.match_file(absolute.name):
                codes -= ignored
        return codes


def _check(args: argparse.Namespace) -> int:
    paths = args.paths or [Path(".")]
    first = paths[0] if paths[0].is_dir() else paths[0].parent
    config = discover(first if first.exists() else Path("."), args.config, args.isolated)
    selection = _Selection(config, args)
    exclude = args.exclude if args.exclude is not None else config.exclude
    excluder = Excluder.build(
        config.root, [*exclude, *config.extend_exclude, *(args.extend_exclude or [])]
    )
    status = EXIT_CLEAN
    files: list[Path] = []
    for path in paths:
        try:
            files.extend(
                discover_files([path], excluder, not args.no_respect_gitignore, args.force_exclude)
            )
        except MissingPathError as exc:
            print(f"ddplint: error: {exc}", file=sys.stderr)
            status = EXIT_ERROR
    cache = Cache(None if args.no_cache else config.root)
    result = run(files, selection, cache, args.jobs)
    diagnostics = result.diagnostics
    internal = list(result.internal_errors)
    outcomes: list[FixOutcome] = []
    if args.fix or args.diff:
        outcomes, untouched = fix_files(diagnostics, selection, result.project, args.unsafe_fixes)
        diagnostics = sorted(
            [*untouched, *(d for o in outcomes for d in o.remaining)], key=lambda d: d.sort_key
        )
        internal += [e for o in outcomes for e in o.internal_errors]
    changed = [o for o in outcomes if o.fixed != o.original]
    if args.diff:
        sys.stdout.write("".join(o.diff() for o in changed))
    elif args.fix:
        for outcome in changed:
            Path(outcome.path).write_text(outcome.fixed, encoding="utf-8")
    _report(args, diagnostics, changed, result.files)
    for message in internal:
        print(f"ddplint: error: {message}", file=sys.stderr)
    if internal:
        status = EXIT_ERROR
    if status == EXIT_ERROR:
        return status
    if args.diff:
        return EXIT_FINDINGS if changed else EXIT_CLEAN
    if diagnostics and not args.exit_zero:
        return EXIT_FINDINGS
    return EXIT_CLEAN


def _report(
    args: argparse.Namespace,
    diagnostics: list[Diagnostic],
    changed: list[FixOutcome],
    files: int,
) -> None:
    if args.diff:
        return
    rendered = FORMATTERS[args.output_format](diagnostics)
    if args.statistics and args.output_format == "text":
        rendered = _statistics(diagnostics)
    if args.output_file is not None:
        args.output_file.parent.mkdir(parents=True, exist_ok=True)
        args.output_file.write_text(rendered, encoding="utf-8")
    else:
        sys.stdout.write(rendered)
    if args.quiet or args.output_format != "text":
        return
    summary = sys.stdout if args.output_file is None else sys.stderr
    fixed = sum(len(o.applied) for o in changed)
    if args.show_fixes and changed:
        print(f"Fixed {fixed} finding{'s' * (fixed != 1)}:", file=summary)
        for outcome in changed:
            for code, fix in outcome.applied:
                print(f"- {outcome.path}: {code} {fix.message}", file=summary)
    if not diagnostics:
        suffix = f" ({fixed} fixed)" if fixed else ""
        print(f"All checks passed! {files} file{'s' * (files != 1)} checked{suffix}.", file=summary)
        return
    count = len(diagnostics)
    noun = "finding" if count == 1 else "findings"
    if fixed:
        print(f"Found {count + fixed} {noun} ({fixed} fixed, {count} remaining).", file=summary)
    else:
        print(f"Found {count} {noun} in {files} file{'s' * (files != 1)} checked.", file=summary)
    safe = sum(1 for d in diagnostics if applicable(d, unsafe=False))
    unsafe = sum(1 for d in diagnostics if applicable(d, unsafe=True)) - safe
    if safe:
        print(f"[*] {safe} fixable with the `--fix` option.", file=summary)
    if unsafe:
        print(
            f"{unsafe} hidden fix{'es' * (unsafe != 1)} can be enabled with the "
            "`--unsafe-fixes` option.",
            file=summary,
        )


def _statistics(diagnostics: list[Diagnostic]) -> str:
    counts = Counter(d.code for d in diagnostics)
    fixable = {d.code for d in diagnostics if d.fix is not None}
    rules = all_rules()
    lines = []
    for code, count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        name = rules[code].name if code in rules else "unparsable-file"
        marker = "[*]" if code in fixable else "   "
        lines.append(f"{count:>5}\t{code}\t{marker} {name}\n")
    return "".join(lines)

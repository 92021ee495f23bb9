"""The click commands: options, help texts and the exit codes they end in."""

from __future__ import annotations

import sys
import traceback
from collections.abc import Sequence
from pathlib import Path

import click
from click.shell_completion import CompletionItem

from ddplint import __version__
from ddplint.cli.exit_codes import EXIT_CLEAN, EXIT_ERROR
from ddplint.output import FORMATS

# The rules, LibCST and the checking machinery are imported by the commands that use them,
# so that `ddplint --version` and `--help` start at the cost of click alone.

_CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


def _complete_code(
    ctx: click.Context, param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    del ctx, param
    from ddplint.rule import all_rules
    from ddplint.selection import known_codes

    rules = all_rules()
    return [
        CompletionItem(code, help=rules[code].name if code in rules else None)
        for code in known_codes()
        if code.startswith(incomplete.upper())
    ]


@click.group(
    context_settings=_CONTEXT,
    invoke_without_command=True,
    epilog="""\b
Examples:
  ddplint check .                     check every Python file below here
  ddplint check --fix train.py        apply the safe fixes
  ddplint rule DDP005                 explain one rule

\b
Shell completion (bash; zsh and fish alike):
  eval "$(_DDPLINT_COMPLETE=bash_source ddplint)"
""",
)
@click.version_option(
    __version__, "-V", "--version", prog_name="ddplint", message="%(prog)s %(version)s"
)
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Find PyTorch DistributedDataParallel pitfalls before they cost a run.

    Exit status: 0 nothing found, 1 findings, 2 a usage, configuration or file error.
    """
    if ctx.invoked_subcommand is None:
        click.echo(ctx.get_help(), err=True)
        ctx.exit(EXIT_ERROR)


_CHECK_EPILOG = """\b
Examples:
  ddplint check                              check the current folder
  ddplint check src/ train.py                check these folders and files
  ddplint check --select DDP005,DDP006 .     only these rules
  ddplint check --fix --show-fixes .         apply the safe fixes and list them
  ddplint check --diff --unsafe-fixes .      show every fix as a diff, write nothing
  ddplint check --output-format sarif -o ddplint.sarif .

\b
Exit status: 0 nothing found (or --exit-zero), 1 findings (with --diff: fixes to make),
2 a usage or configuration error, a missing or unreadable path, or an internal error.
"""


@cli.command(context_settings=_CONTEXT, epilog=_CHECK_EPILOG)
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--select",
    multiple=True,
    metavar="CODES",
    help="Codes or prefixes to enable, comma-separated (replaces the configured select).",
    shell_complete=_complete_code,
)
@click.option(
    "--ignore",
    multiple=True,
    metavar="CODES",
    help="Codes or prefixes to disable.",
    shell_complete=_complete_code,
)
@click.option(
    "--extend-select",
    multiple=True,
    metavar="CODES",
    help="Codes or prefixes to enable on top of the selection.",
    shell_complete=_complete_code,
)
@click.option(
    "--exclude",
    multiple=True,
    metavar="PATTERN",
    help="Gitignore-style patterns to skip (replaces the configured exclude and the defaults).",
)
@click.option("--extend-exclude", multiple=True, metavar="PATTERN", help="More patterns to skip.")
@click.option(
    "--force-exclude", is_flag=True, help="Apply exclusions to files named on the command line too."
)
@click.option(
    "--no-respect-gitignore", is_flag=True, help="Also check files that .gitignore ignores."
)
@click.option(
    "--config",
    type=click.Path(path_type=Path, dir_okay=False),
    metavar="FILE",
    help="pyproject.toml to read instead of the nearest one.",
)
@click.option("--isolated", is_flag=True, help="Ignore all configuration.")
@click.option("--fix", is_flag=True, help="Apply the safe fixes, writing the files.")
@click.option("--unsafe-fixes", is_flag=True, help="With --fix or --diff, apply unsafe fixes too.")
@click.option("--diff", is_flag=True, help="Print the fixes as a diff without writing the files.")
@click.option("--show-fixes", is_flag=True, help="List the fixes applied.")
@click.option(
    "--output-format",
    type=click.Choice(FORMATS),
    default="text",
    show_default=True,
    help="How to print findings: text (the same as concise: one line a finding), full (with "
    "the source lines and the fix), json, sarif, github.",
)
@click.option(
    "-o",
    "--output-file",
    type=click.Path(path_type=Path),
    metavar="FILE",
    help="Write the findings to FILE instead of standard output.",
)
@click.option("-q", "--quiet", is_flag=True, help="Print findings only, no summary.")
@click.option(
    "--statistics",
    is_flag=True,
    help="Count findings per rule instead of listing them (text or json output).",
)
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option("--no-cache", is_flag=True, help="Neither read nor write the cache.")
@click.option(
    "--preview",
    is_flag=True,
    help="Also show unproven findings (resting on a name or on code not known to run), marked.",
)
@click.option(
    "--check-importers",
    is_flag=True,
    help="Also check the project files that import the files given, directly or not, and "
    "report what a change to them causes there (the `ddplint-importers` pre-commit hook).",
)
@click.option(
    "--jobs",
    type=click.IntRange(min=1),
    metavar="N",
    help="Processes to use (default: one per core).",
)
def check(paths: tuple[Path, ...], **options: object) -> int:
    """Check files or folders (default: the current folder) for DDP pitfalls."""
    from ddplint.cli.check import run_check
    from ddplint.cli.options import CheckOptions

    return run_check(CheckOptions.from_click(paths, options))


@cli.command(context_settings=_CONTEXT, epilog="\b\nExample:\n  ddplint rule DDP005")
@click.argument("code", metavar="CODE", shell_complete=_complete_code)
def rule(code: str) -> int:
    """Explain one rule: what it finds, why, examples, fix safety."""
    from ddplint import rule_docs
    from ddplint.parsing import PARSE_ERROR_CODE
    from ddplint.rule import all_rules

    wanted = code.strip().upper()
    if wanted == PARSE_ERROR_CODE:
        sys.stdout.write(rule_docs.render_file_error())
        return EXIT_CLEAN
    found = all_rules().get(wanted)
    if found is None:
        click.echo(f"ddplint: error: unknown rule {code!r}; see `ddplint rules`", err=True)
        return EXIT_ERROR
    sys.stdout.write(rule_docs.render(found))
    return EXIT_CLEAN


@cli.command(context_settings=_CONTEXT)
def rules() -> int:
    """List every rule: code, name, severity and fix."""
    from ddplint import rule_docs

    sys.stdout.write(rule_docs.table())
    return EXIT_CLEAN


def main(argv: Sequence[str] | None = None) -> int:
    """Run `ddplint ARGV` and return its exit code; never raises, never a traceback."""
    try:
        result = cli.main(
            args=list(argv) if argv is not None else None,
            prog_name="ddplint",
            standalone_mode=False,
        )
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.ClickException as exc:
        exc.show()
        return EXIT_ERROR if exc.exit_code not in (0, 1) else exc.exit_code
    except click.Abort:
        click.echo("ddplint: interrupted", err=True)
        return 130
    except BrokenPipeError:
        return EXIT_ERROR
    except Exception as exc:  # the last resort: a one-line report, never a traceback
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        click.echo(
            f"ddplint: internal error: {type(exc).__name__}: {exc} "
            f"[{frame.filename}:{frame.lineno}]; please report it",
            err=True,
        )
        return EXIT_ERROR
    return result if isinstance(result, int) else EXIT_CLEAN

"""A rule's documentation: `ddplint rule CODE`, the `ddplint rules` table, docs/rules.md."""

from __future__ import annotations

import re

from ddplint.parsing import PARSE_ERROR_CODE
from ddplint.rule import Rule, all_rules

SECTIONS = (
    "What it does",
    "Why is this bad?",
    "Example",
    "Use instead",
    "Fix safety",
    "References",
)


FILE_ERROR_NAME = "file-not-checked"
FILE_ERROR_SUMMARY = "the file cannot be read, decoded or parsed, so no rule checked it"
FILE_ERROR_EXPLANATION = """
## What it does
Reports a Python file that ddplint could not check at all: it cannot be read (permissions),
decoded (bytes that are not valid in the file's declared encoding, UTF-8 by default), or
parsed (a syntax error, or brackets nested deeper than Python allows). The finding points at
the syntax error when there is one, else at line 1.

## Why is this bad?
No rule looked at the file, so a clean run would say nothing about it. DDP999 is reported
whatever `select` names; `ignore = ["DDP999"]` or a per-file ignore turns it off (for
example for template files that are not Python).

## Example
```python
def train(model:
```

## Use instead
```python
def train(model):
```

## Fix safety
There is no fix.

## References
- https://docs.python.org/3/reference/lexical_analysis.html#encoding-declarations
"""


def fix_label(rule: type[Rule]) -> str:
    return rule.fixable.value if rule.fixable is not None else "no"


def explanation_text(rule: type[Rule]) -> str:
    """The explanation without markdown markup, for SARIF's plain-text fields."""
    text = re.sub(r"^#+\s*", "", rule.explanation.strip(), flags=re.MULTILINE)
    return text.replace("```python\n", "").replace("```\n", "").replace("```", "")


def render_file_error() -> str:
    """`ddplint rule DDP999`."""
    return (
        f"# {FILE_ERROR_NAME} ({PARSE_ERROR_CODE})\n\n"
        f"Severity: error. Fix: no.\nMessage: {FILE_ERROR_SUMMARY}\n\n"
        f"{FILE_ERROR_EXPLANATION.strip()}\n"
    )


def default_label(rule: type[Rule]) -> str:
    return "yes" if rule.default else "no"


def selection_note(rule: type[Rule]) -> str:
    """Whether a plain `ddplint check` runs the rule, and how to turn an opt-in rule on."""
    if rule.default:
        return "In the default rule set."
    return (
        "Opt-in: not in the default rule set; enable it with "
        f'`--extend-select {rule.code}` (or `extend-select`, or `select = ["ALL"]`).'
    )


def render(rule: type[Rule]) -> str:
    """The whole explanation of one rule, as `ddplint rule` prints it."""
    return (
        f"# {rule.name} ({rule.code})\n\n"
        f"Severity: {rule.severity.value}. Fix: {fix_label(rule)}. {selection_note(rule)}\n"
        f"Message: {rule.summary}\n\n"
        f"{rule.explanation.strip()}\n"
    )


def table() -> str:
    """`ddplint rules`: code, name, severity, fixability and whether the rule is in the
    default set (the others run only when selected), one rule a line."""
    rows = [("code", "name", "severity", "fix", "default")]
    rows += [
        (code, rule.name, rule.severity.value, fix_label(rule), default_label(rule))
        for code, rule in all_rules().items()
    ]
    rows.append((PARSE_ERROR_CODE, FILE_ERROR_NAME, "error", "no", "yes"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        + "\n"
        for row in rows
    )


def markdown() -> str:
    """docs/rules.md: the table and every rule's explanation."""
    parts = [
        "# ddplint rules\n\nRules marked `default: no` are opt-in: they run only when "
        'selected (`--extend-select CODE`, `select = ["ALL"]`).\n\n'
        "| code | name | severity | fix | default | message |\n|---|---|---|---|---|---|\n"
    ]
    for code, rule in all_rules().items():
        parts.append(
            f"| [{code}](#{code.lower()}) | {rule.name} | {rule.severity.value} "
            f"| {fix_label(rule)} | {default_label(rule)} | {rule.summary} |\n"
        )
    parts.append(
        f"| [{PARSE_ERROR_CODE}](#{PARSE_ERROR_CODE.lower()}) | {FILE_ERROR_NAME} | error "
        f"| no | yes | {FILE_ERROR_SUMMARY} |\n"
    )
    explained = [
        (code, rule.name, rule.severity.value, fix_label(rule), rule.explanation, rule.default)
        for code, rule in all_rules().items()
    ]
    explained.append(
        (PARSE_ERROR_CODE, FILE_ERROR_NAME, "error", "no", FILE_ERROR_EXPLANATION, True)
    )
    for code, name, severity, fix, explanation, default in explained:
        body = re.sub(r"^## ", "### ", explanation.strip(), flags=re.MULTILINE)
        opt_in = "" if default else " Opt-in (not in the default set)."
        parts.append(
            f"\n## {code}\n\n**{name}**, severity {severity}, fix: {fix}.{opt_in}\n\n{body}\n"
        )
    return "".join(parts)


if __name__ == "__main__":
    import sys

    sys.stdout.write(markdown())

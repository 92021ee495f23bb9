"""A rule's documentation: `ddplint rule CODE`, the `ddplint rules` table, docs/rules.md."""

from __future__ import annotations

import re

from ddplint.checker import PARSE_ERROR_CODE
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


def render(rule: type[Rule]) -> str:
    """The whole explanation of one rule, as `ddplint rule` prints it."""
    return (
        f"# {rule.name} ({rule.code})\n\n"
        f"Severity: {rule.severity.value}. Fix: {fix_label(rule)}.\n"
        f"Message: {rule.summary}\n\n"
        f"{rule.explanation.strip()}\n"
    )


def table() -> str:
    """`ddplint rules`: code, name, severity and fixability, one rule a line."""
    rows = [("code", "name", "severity", "fix")]
    rows += [
        (code, rule.name, rule.severity.value, fix_label(rule))
        for code, rule in all_rules().items()
    ]
    rows.append((PARSE_ERROR_CODE, FILE_ERROR_NAME, "error", "no"))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    return "".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        + "\n"
        for row in rows
    )


def markdown() -> str:
    """docs/rules.md: the table and every rule's explanation."""
    parts = [
        "# ddplint rules\n\n| code | name | severity | fix | message |\n|---|---|---|---|---|\n"
    ]
    for code, rule in all_rules().items():
        parts.append(
            f"| [{code}](#{code.lower()}) | {rule.name} | {rule.severity.value} "
            f"| {fix_label(rule)} | {rule.summary} |\n"
        )
    parts.append(
        f"| [{PARSE_ERROR_CODE}](#{PARSE_ERROR_CODE.lower()}) | {FILE_ERROR_NAME} | error "
        f"| no | {FILE_ERROR_SUMMARY} |\n"
    )
    explained = [
        (code, rule.name, rule.severity.value, fix_label(rule), rule.explanation)
        for code, rule in all_rules().items()
    ]
    explained.append((PARSE_ERROR_CODE, FILE_ERROR_NAME, "error", "no", FILE_ERROR_EXPLANATION))
    for code, name, severity, fix, explanation in explained:
        body = re.sub(r"^## ", "### ", explanation.strip(), flags=re.MULTILINE)
        parts.append(f"\n## {code}\n\n**{name}**, severity {severity}, fix: {fix}.\n\n{body}\n")
    return "".join(parts)


if __name__ == "__main__":
    import sys

    sys.stdout.write(markdown())

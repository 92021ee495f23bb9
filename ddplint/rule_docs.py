"""A rule's documentation: `ddplint rule CODE`, the `ddplint rules` table, docs/rules.md."""

from __future__ import annotations

import re

from ddplint.rule import Rule, all_rules

SECTIONS = (
    "What it does",
    "Why is this bad?",
    "Example",
    "Use instead",
    "Fix safety",
    "References",
)


def fix_label(rule: type[Rule]) -> str:
    return rule.fixable.value if rule.fixable is not None else "no"


def explanation_text(rule: type[Rule]) -> str:
    """The explanation without markdown markup, for SARIF's plain-text fields."""
    text = re.sub(r"^#+\s*", "", rule.explanation.strip(), flags=re.MULTILINE)
    return text.replace("```python\n", "").replace("```\n", "").replace("```", "")


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
    for code, rule in all_rules().items():
        body = re.sub(r"^## ", "### ", rule.explanation.strip(), flags=re.MULTILINE)
        parts.append(
            f"\n## {code}\n\n**{rule.name}**, severity {rule.severity.value}, "
            f"fix: {fix_label(rule)}.\n\n{body}\n"
        )
    return "".join(parts)


if __name__ == "__main__":
    import sys

    sys.stdout.write(markdown())

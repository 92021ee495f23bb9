"""docs/rules.md is generated from the rules themselves and must not go stale."""

from __future__ import annotations

from pathlib import Path

from ddplint.rule_docs import markdown

DOCS = Path(__file__).resolve().parent.parent / "docs" / "rules.md"


def test_rules_md_is_current():
    assert DOCS.read_text(encoding="utf-8") == markdown(), (
        "docs/rules.md is stale: regenerate it with `python -m ddplint.rule_docs > docs/rules.md`"
    )

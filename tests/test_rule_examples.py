"""Every rule's own examples, documentation and fixes, run the same way for all rules."""

from __future__ import annotations

import libcst as cst
import pytest

from ddplint.api import fix_source, lint_source
from ddplint.rule import all_rules
from ddplint.rule_docs import SECTIONS

RULES = all_rules()
FLAG_CASES = [(code, i, src) for code, rule in RULES.items() for i, src in enumerate(rule.flag)]
ALLOW_CASES = [(code, i, src) for code, rule in RULES.items() for i, src in enumerate(rule.allow)]
FIXABLE_CASES = [(code, i, src) for code, i, src in FLAG_CASES if RULES[code].fixable]


def codes_in(source: str, code: str) -> list[int]:
    return [d.start.row for d in lint_source(source, select=[code])]


@pytest.mark.parametrize(("code", "index", "source"), FLAG_CASES)
def test_flag_example_is_flagged(code, index, source):
    assert codes_in(source, code), f"{code} flag example {index} not flagged"


@pytest.mark.parametrize(("code", "index", "source"), ALLOW_CASES)
def test_allow_example_is_left_alone(code, index, source):
    assert not codes_in(source, code), f"{code} allow example {index} flagged"


@pytest.mark.parametrize("code", sorted(RULES))
def test_rule_is_documented(code):
    rule = RULES[code]
    assert len(rule.flag) >= 3 and len(rule.allow) >= 3
    assert rule.name == rule.name.lower() and " " not in rule.name
    positions = [rule.explanation.find(f"## {section}") for section in SECTIONS]
    assert all(p >= 0 for p in positions), f"{code} lacks a section"
    assert positions == sorted(positions), f"{code} sections out of order"


@pytest.mark.parametrize(("code", "index", "source"), FIXABLE_CASES)
def test_fix_parses_removes_finding_keeps_comments_and_is_idempotent(code, index, source):
    unsafe = True
    marked = source.replace("\n", "  # keep-me\n", 1)
    fixed = fix_source(marked, unsafe=unsafe, select=[code])
    cst.parse_module(fixed)
    assert "# keep-me" in fixed
    before = lint_source(marked, select=[code])
    unfixable = [d for d in before if d.fix is None]
    if len(unfixable) < len(before):
        assert fixed != marked, f"{code} example {index}: fix changed nothing"
    assert len(codes_in(fixed, code)) == len(unfixable), f"{code} example {index} still flagged"
    assert fix_source(fixed, unsafe=unsafe, select=[code]) == fixed

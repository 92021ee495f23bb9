"""The default rule set is earned at first contact: bench/realworld/first_contact.py reads
what each fresh set's default run reported before any fix, joined to the judges' verdicts,
and every rule with enough of that evidence is in the default set exactly when its figures
meet the bar."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from ddplint.rule import all_rules

SCRIPT = Path(__file__).resolve().parents[1] / "bench" / "realworld" / "first_contact.py"
spec = importlib.util.spec_from_file_location("first_contact", SCRIPT)
assert spec is not None and spec.loader is not None
first_contact = importlib.util.module_from_spec(spec)
sys.modules["first_contact"] = first_contact
spec.loader.exec_module(first_contact)


def test_every_recorded_first_contact_finding_has_a_verdict() -> None:
    sets = first_contact.load_sets()
    assert len(sets) >= 39
    assert all(v in ("true", "false", "debatable") for s in sets for v in s.verdicts)


def test_rules_with_first_contact_evidence_are_default_exactly_when_they_earn_it() -> None:
    sets = first_contact.load_sets()
    tallies = first_contact.per_rule(sets)
    rules = all_rules()
    decided = {
        code: first_contact.earns_default(code, sets)
        for code, tally in tallies.items()
        if tally.findings >= first_contact.EVIDENCE and code in rules
    }
    assert decided, "no rule has first-contact evidence"
    wrong = {code: earned for code, earned in decided.items() if rules[code].default != earned}
    assert wrong == {}, f"Rule.default disagrees with first_contact.py: {wrong}"
    assert not decided["DDP016"] and decided["DDP002"]


def _record(tmp_path: Path, sets: dict[str, list[tuple[str, str]]]) -> Path:
    """A record of `sets` (name: [(code, verdict)]) with its verdict files."""
    record = ["# test record"]
    for name, findings in sets.items():
        rows = ", ".join(
            f'["r", "a.py", "{code}", {i}, "x{i}"]' for i, (code, _) in enumerate(findings)
        )
        record += ["[[set]]", f'name = "{name}"', 'commit = "abc1234"', f"findings = [{rows}]"]
        verdicts = [
            f'[[finding]]\nrepo = "r"\npath = "a.py"\ncode = "{code}"\nline = {i}\n'
            f'text = "x{i}"\nverdict = "{verdict}"\nreason = "why"\n'
            for i, (code, verdict) in enumerate(findings)
        ]
        (tmp_path / f"verdicts_{name}.toml").write_text("\n".join(verdicts), encoding="utf-8")
    path = tmp_path / "first_contact.toml"
    path.write_text("\n".join(record) + "\n", encoding="utf-8")
    return path


def test_the_bar_the_evidence_the_recent_sets_and_the_card_rules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(first_contact, "RECENT", 1)
    old = [("DDP050", "false")] * 4 + [("DDP051", "false")] * 2 + [("DDP001", "false")] * 5
    old += [("DDP052", "true"), ("DDP052", "debatable"), ("DDP052", "debatable")]
    new = [("DDP050", "true")] * 5 + [("DDP053", "true")] * 2 + [("DDP053", "false")] * 2
    sets = first_contact.load_sets(_record(tmp_path, {"fresh1": old, "fresh2": new}))
    # overall 5 / 4 / 0 misses 0.75; the last set, five findings all true, earns it back
    assert first_contact.earns_default("DDP050", sets)
    assert first_contact.earns_default("DDP051", sets)  # two findings: too few to judge
    assert first_contact.earns_default("DDP001", sets)  # a card rule: narrowed, not dropped
    assert not first_contact.earns_default("DDP052", sets)  # 1 / 0 / 2: strict 0.33
    assert not first_contact.earns_default("DDP053", sets)  # 2 / 2 / 0, four recent only


def test_a_finding_without_a_verdict_is_an_error(tmp_path: Path) -> None:
    record = _record(tmp_path, {"fresh1": [("DDP050", "true")]})
    (tmp_path / "verdicts_fresh1.toml").write_text("", encoding="utf-8")
    with pytest.raises(ValueError, match="no verdict"):
        first_contact.load_sets(record)


def _stubs(path: Path, rows: list[tuple[str, str, int, str]]) -> Path:
    """A run.py stubs file of findings (path, code, line, text) in repository r."""
    path.write_text(
        "".join(
            f'[[finding]]\nrepo = "r"\npath = "{p}"\ncode = "{code}"\nline = {line}\n'
            f'text = "{text}"\nmessage = "m"\nverdict = ""\nreason = ""\n\n'
            for p, code, line, text in rows
        ),
        encoding="utf-8",
    )
    return path


def test_an_opt_in_rule_earns_its_way_back_by_its_select_all_findings(tmp_path: Path) -> None:
    record = _record(tmp_path, {"fresh1": [("DDP014", "true")]})
    default = _stubs(tmp_path / "d.toml", [("a.py", "DDP014", 0, "x0")])
    every = _stubs(
        tmp_path / "all.toml",
        [("a.py", "DDP014", 0, "x0"), ("a.py", "DDP999", 1, "x1")]
        + [("b.py", "DDP050", n, f"y{n}") for n in range(3)],
    )
    verdicts = tmp_path / "verdicts_fresh2.toml"
    verdicts.write_text(
        "".join(
            f'[[finding]]\nrepo = "r"\npath = "{p}"\ncode = "{c}"\nline = {n}\n'
            f'text = "{t}"\nverdict = "true"\nreason = "why"\n'
            for p, c, n, t in [("a.py", "DDP014", 0, "x0")]
            + [("b.py", "DDP050", n, f"y{n}") for n in range(3)]
        ),
        encoding="utf-8",
    )
    # the default run's finding once, the opt-in rule's three, the unchecked file left out
    assert first_contact.record_set("fresh2", "abc1234", default, every, record) == 4
    sets = first_contact.load_sets(record)
    assert [s.codes for s in sets] == [("DDP014",), ("DDP014",)]  # a set's own figures
    assert sets[1].opt_in == (("DDP050", "true"),) * 3
    assert first_contact.per_rule(sets)["DDP050"].true == 3
    assert first_contact.per_rule(sets)["DDP014"].findings == 2

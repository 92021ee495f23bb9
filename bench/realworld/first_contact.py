"""Each rule's first-contact figures, and whether they earn it the default rule set.

`first_contact.toml` records what `ddplint check` reported on each fresh set before any fix
against it (the default run, at the commit under test); `verdicts_<set>.toml` holds the
judges' verdicts. A set judged at first contact is the only evidence about the next
repository: once fixed against, its findings say nothing about code ddplint has not met.

A rule earns the default set (`Rule.default`) when its first-contact findings read at
least `PRECISION` precision and `STRICT` strict precision (debatable findings counted
against), or when it has fewer than `EVIDENCE` of them. A rule that misses the bar over
every recorded set keeps its place when the sets of the last `RECENT` rounds' code, where
it has at least `EVIDENCE_RECENT` findings, meet it (the rule has been fixed since). The
card's rules (DDP001 to DDP007) stay in the default set whatever their figures: they are
narrowed to their harm instead.

Standard library only. Usage:

    python bench/realworld/first_contact.py            # per rule, per set, and the verdict
    python bench/realworld/first_contact.py --sets     # per set too
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

HERE = Path(__file__).resolve().parent
RECORD = HERE / "first_contact.toml"
PRECISION = 0.75
STRICT = 0.5
EVIDENCE = 3
RECENT = 19  # sets: about the last three sessions' rounds
EVIDENCE_RECENT = 5
CARD_RULES = frozenset(f"DDP00{n}" for n in range(1, 8))

Key = tuple[str, str, str, str]  # repo, path, code, stripped line text


@dataclass
class Tally:
    """True, false and debatable first-contact findings."""

    true: int = 0
    false: int = 0
    debatable: int = 0

    def add(self, verdict: str) -> None:
        setattr(self, verdict, getattr(self, verdict) + 1)

    @property
    def findings(self) -> int:
        return self.true + self.false + self.debatable

    @property
    def precision(self) -> float:
        judged = self.true + self.false
        return self.true / judged if judged else 1.0

    @property
    def strict(self) -> float:
        return self.true / self.findings if self.findings else 1.0

    def meets_bar(self) -> bool:
        return self.precision >= PRECISION and self.strict >= STRICT

    def __str__(self) -> str:
        return (
            f"{self.true:3d} / {self.false:2d} / {self.debatable:2d}  "
            f"{self.precision:.2f} / {self.strict:.2f}"
        )


@dataclass(frozen=True)
class FreshSet:
    name: str
    commit: str
    verdicts: tuple[str, ...]  # one per default-run finding
    codes: tuple[str, ...]


def load_sets(record: Path = RECORD) -> list[FreshSet]:
    """The recorded sets in order, each finding joined to its verdict (ValueError when a
    finding has none: the record and the verdicts disagree)."""
    sets = []
    for entry in tomllib.loads(record.read_text(encoding="utf-8"))["set"]:
        judged = _verdicts(record.parent / f"verdicts_{entry['name']}.toml")
        verdicts, codes = [], []
        for repo, path, code, _line, text in entry["findings"]:
            key = (repo, path, code, text.strip())
            if key not in judged:
                raise ValueError(f"{entry['name']}: no verdict for {key}")
            verdicts.append(judged[key])
            codes.append(code)
        sets.append(FreshSet(entry["name"], entry["commit"], tuple(verdicts), tuple(codes)))
    return sets


def _verdicts(path: Path) -> dict[Key, str]:
    findings = tomllib.loads(path.read_text(encoding="utf-8")).get("finding", [])
    return {(f["repo"], f["path"], f["code"], f["text"].strip()): f["verdict"] for f in findings}


def per_rule(sets: list[FreshSet]) -> dict[str, Tally]:
    tallies: dict[str, Tally] = {}
    for fresh in sets:
        for code, verdict in zip(fresh.codes, fresh.verdicts, strict=True):
            tallies.setdefault(code, Tally()).add(verdict)
    return tallies


def earns_default(code: str, sets: list[FreshSet]) -> bool:
    """Whether `code`'s first-contact figures earn it the default set (module docstring)."""
    if code in CARD_RULES:
        return True
    every = per_rule(sets).get(code, Tally())
    if every.findings < EVIDENCE or every.meets_bar():
        return True
    recent = per_rule(sets[-RECENT:]).get(code, Tally())
    return recent.findings >= EVIDENCE_RECENT and recent.meets_bar()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", action="store_true", help="print each set's figures too")
    args = parser.parse_args(argv)
    sets = load_sets()
    every, recent = per_rule(sets), per_rule(sets[-RECENT:])
    print(
        f"First contact: {len(sets)} sets ({sets[0].name} to {sets[-1].name}), "
        f"{sum(t.findings for t in every.values())} default-run findings; "
        f"recent: the last {RECENT} sets"
    )
    print(f"{'rule':8} {'all: T /  F /  D  prec / strict':34} {'recent':30} default")
    for code in sorted(every):
        verdict = "yes" if earns_default(code, sets) else "no"
        if code in CARD_RULES:
            verdict += " (card)"
        print(f"{code:8} {every[code]!s:34} {recent.get(code, Tally())!s:30} {verdict}")
    total = Tally()
    for tally in every.values():
        total.true, total.false = total.true + tally.true, total.false + tally.false
        total.debatable += tally.debatable
    print(f"{'all':8} {total!s}")
    if args.sets:
        for fresh in sets:
            tally = Tally()
            for verdict in fresh.verdicts:
                tally.add(verdict)
            print(f"{fresh.name:9} {fresh.commit:8} {tally}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

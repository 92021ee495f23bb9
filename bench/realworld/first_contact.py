"""Each rule's first-contact figures, and whether they earn it the default rule set.

`first_contact.toml` records what `ddplint check` reported on each fresh set before any fix
against it (the default run, at the commit under test), and, from fresh152 on, what the
opt-in rules would have reported had they been in the default set (`opt_in`: the findings
of the `--select=ALL` run that the default run lacks; proven findings, as a default rule's
are); `verdicts_<set>.toml` holds the judges' verdicts. A set judged at first contact is
the only evidence about the next repository: once fixed against, its findings say nothing
about code ddplint has not met. A rule's figures count both kinds, so an opt-in rule
earns its way into the default set as a default rule keeps its place; a set's own figures
(the headline) count the default run alone.

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
    python bench/realworld/first_contact.py --record fresh164 <commit> \
        --default stubs_fresh164.toml --all stubs_fresh164_all.toml   # append a judged set
"""

from __future__ import annotations

import argparse
import json
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

    @classmethod
    def of(cls, verdicts: tuple[str, ...]) -> Tally:
        tally = cls()
        for verdict in verdicts:
            tally.add(verdict)
        return tally

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
    opt_in: tuple[tuple[str, str], ...] = ()  # (code, verdict) of the opt-in rules' findings


def load_sets(record: Path = RECORD) -> list[FreshSet]:
    """The recorded sets in order, each finding joined to its verdict (ValueError when a
    finding has none: the record and the verdicts disagree)."""
    sets = []
    for entry in tomllib.loads(record.read_text(encoding="utf-8"))["set"]:
        judged = _verdicts(record.parent / f"verdicts_{entry['name']}.toml")
        default = _joined(entry["name"], entry["findings"], judged)
        sets.append(
            FreshSet(
                entry["name"],
                entry["commit"],
                tuple(verdict for _, verdict in default),
                tuple(code for code, _ in default),
                tuple(_joined(entry["name"], entry.get("opt_in", []), judged)),
            )
        )
    return sets


def _joined(
    name: str, rows: list[list[object]], judged: dict[Key, dict[int, str]]
) -> list[tuple[str, str]]:
    """(code, verdict) of each recorded row of set `name`: the verdict of the finding with
    the row's text, and its line where several share the text (`x = f()` twice in a file)."""
    found = []
    for repo, path, code, line, text in rows:
        key = _key(repo, path, code, text)
        if key not in judged:
            raise ValueError(f"{name}: no verdict for {key}")
        by_line = judged[key]
        found.append((str(code), by_line.get(int(str(line)), next(iter(by_line.values())))))
    return found


def _verdicts(path: Path) -> dict[Key, dict[int, str]]:
    """Each judged finding's verdict, by (repo, path, code, text) and then by line."""
    judged: dict[Key, dict[int, str]] = {}
    for f in tomllib.loads(path.read_text(encoding="utf-8")).get("finding", []):
        key = _key(f["repo"], f["path"], f["code"], f["text"])
        judged.setdefault(key, {})[f["line"]] = f["verdict"]
    return judged


def _key(repo: object, path: object, code: object, text: object) -> Key:
    """How a recorded finding meets its verdict and its twin in another run: line numbers
    aside (they shift), its repository, file, rule and stripped line text."""
    return (str(repo), str(path), str(code), str(text).strip())


def per_rule(sets: list[FreshSet]) -> dict[str, Tally]:
    """Each rule's first-contact findings: the default run's and the opt-in rules'."""
    tallies: dict[str, Tally] = {}
    for fresh in sets:
        for code, verdict in (*zip(fresh.codes, fresh.verdicts, strict=True), *fresh.opt_in):
            tallies.setdefault(code, Tally()).add(verdict)
    return tallies


def record_set(name: str, commit: str, default: Path, every: Path, record: Path = RECORD) -> int:
    """Append set `name`, judged at `commit`, to `record` from the stubs of its default run
    and of its `--select=ALL` run (run.py `--write-stubs`); DDP999 (a file not checked)
    apart. Returns the number of rows written."""

    def rows(path: Path) -> list[tuple[str, str, str, int, str]]:
        stubs = tomllib.loads(path.read_text(encoding="utf-8")).get("finding", [])
        return sorted(
            (f["repo"], f["path"], f["code"], f["line"], f["text"])
            for f in stubs
            if f["code"] != "DDP999"
        )

    findings = rows(default)
    seen = {_key(repo, path, code, text) for repo, path, code, _, text in findings}
    opt_in = [row for row in rows(every) if _key(*row[:3], row[4]) not in seen]
    lines = ["", "[[set]]", f'name = "{name}"', f'commit = "{commit}"']
    for key, found in (("findings", findings), ("opt_in", opt_in)):
        lines.append(f"{key} = [")
        lines += [
            "  [" + ", ".join(json.dumps(v, ensure_ascii=False) for v in row) + "],"
            for row in found
        ]
        lines.append("]")
    with record.open("a", encoding="utf-8") as out:
        out.write("\n".join(lines) + "\n")
    return len(findings) + len(opt_in)


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
    parser.add_argument(
        "--record", nargs=2, metavar=("SET", "COMMIT"), help="append a judged set to the record"
    )
    parser.add_argument("--default", type=Path, help="with --record: the default run's stubs")
    parser.add_argument("--all", type=Path, help="with --record: the --select=ALL run's stubs")
    args = parser.parse_args(argv)
    if args.record:
        if args.default is None or args.all is None:
            parser.error("--record needs --default and --all")
        name, commit = args.record
        written = record_set(name, commit, args.default, args.all)
        print(f"{name}: {written} findings recorded in {RECORD}")
        return 0
    sets = load_sets()
    every, recent = per_rule(sets), per_rule(sets[-RECENT:])
    opt_in = sum(len(fresh.opt_in) for fresh in sets)
    print(
        f"First contact: {len(sets)} sets ({sets[0].name} to {sets[-1].name}), "
        f"{sum(len(fresh.codes) for fresh in sets)} default-run findings and {opt_in} of "
        f"opt-in rules; recent: the last {RECENT} sets"
    )
    print(f"{'rule':8} {'all: T /  F /  D  prec / strict':34} {'recent':30} default")
    for code in sorted(every):
        verdict = "yes" if earns_default(code, sets) else "no"
        if code in CARD_RULES:
            verdict += " (card)"
        elif every[code].findings < EVIDENCE:
            verdict = "too few to decide"
        print(f"{code:8} {every[code]!s:34} {recent.get(code, Tally())!s:30} {verdict}")
    total = Tally.of(tuple(verdict for fresh in sets for verdict in fresh.verdicts))
    print(f"{'default':8} {total!s}  (the default runs)")
    if args.sets:
        for fresh in sets:
            print(f"{fresh.name:9} {fresh.commit[:8]:8} {Tally.of(fresh.verdicts)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

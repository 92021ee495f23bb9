"""corpus/lint is the project's measure of itself: ddplint's findings over it must equal
the markers exactly (a missed finding and an extra one both fail). Each case is checked as
the one content of a project of its own (`corpus_case_project`), with every rule (`--select
ALL`: opt-in rules too) and `--preview`: `# expect: CODE` marks a proven finding,
`# expect-preview: CODE` an unproven one (hidden without `--preview`)."""

from __future__ import annotations

import functools
import io
import re
import tokenize
from collections import Counter
from pathlib import Path

import pytest
from conftest import LINT_CASES, LINT_CORPUS, corpus_case_project

from ddplint.rule import all_rules

_EXPECT = re.compile(
    r"#\s*expect(?P<preview>-preview)?:\s*(?P<codes>[A-Z]+\d+(?:\s*,\s*[A-Z]+\d+)*)"
)
PREVIEW = "preview:"  # prefixed to the code of an unproven finding


@functools.cache
def expected_findings() -> Counter[tuple[str, int, str]]:
    """(file, line, code) for every marker, the code prefixed `preview:` for an unproven
    one; read from comments only, never strings."""
    expected: Counter[tuple[str, int, str]] = Counter()
    for path in sorted(LINT_CORPUS.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type == tokenize.COMMENT:
                match = _EXPECT.search(token.string)
                if match:
                    case = path.relative_to(LINT_CORPUS).as_posix()
                    prefix = PREVIEW if match.group("preview") else ""
                    for code in re.split(r"\s*,\s*", match.group("codes")):
                        expected[(case, token.start[0], prefix + code)] += 1
    return expected


def test_findings_equal_markers(cli, tmp_path):
    actual: Counter[tuple[str, int, str]] = Counter()
    for case in LINT_CASES:
        root = corpus_case_project(case, tmp_path / case).resolve()
        result = cli(
            *("check", "--no-cache", "--exit-zero", "--output-format", "json"),
            *("--select", "ALL", "--preview", root / case),
        )
        assert result.code == 0, result.err
        assert "internal error" not in result.err, result.err
        for d in result.json():
            path = Path(d["filename"]).resolve().relative_to(root).as_posix()
            code = (PREVIEW if d["unproven"] else "") + d["code"]
            actual[(path, d["location"]["row"], code)] += 1
    expected = expected_findings()
    missed = sorted((expected - actual).elements())
    extra = sorted((actual - expected).elements())
    assert not missed and not extra, f"missed (marked, not found): {missed}\nextra: {extra}"


@pytest.mark.parametrize("code", sorted(all_rules()))
def test_every_rule_has_flag_and_clean_cases(code):
    """At least three scripts each rule must flag and three it must leave alone."""
    prefix = code.lower()
    flag = [p for p in LINT_CORPUS.iterdir() if p.name.startswith(f"{prefix}_flag_")]
    clean = [p for p in LINT_CORPUS.iterdir() if p.name.startswith(f"{prefix}_clean_")]
    assert len(flag) >= 3, f"{code}: {len(flag)} flag cases"
    assert len(clean) >= 3, f"{code}: {len(clean)} clean cases"
    marked = {c.removeprefix(PREVIEW) for (_, _, c) in expected_findings()}
    assert code in marked, f"{code} is never expected anywhere in the corpus"

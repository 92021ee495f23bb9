"""The line-at-a-time test that lets most files skip the exact nesting scan before LibCST
parses them never lets through a file the exact scan would stop."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from ddplint.parsing import LONG_STATEMENT, MAX_NESTING, _shallow, nesting

CORPUS = Path(__file__).resolve().parent.parent / "corpus" / "lint"


def _within(text: str) -> bool:
    deepest, longest = nesting(text)
    return deepest <= MAX_NESTING and longest < LONG_STATEMENT


def _random_text(rng: random.Random) -> str:
    pieces = ["(", ")", "[", "]", "{", "}", "\n", "\\\n", "\r\n", "\r", "x", "ab = 1", " "]
    weights = [6, 5, 3, 3, 2, 2, 4, 1, 1, 1, 8, 3, 4]
    text = "".join(rng.choices(pieces, weights, k=rng.randrange(1, 400)))
    if rng.random() < 0.3:  # a long statement somewhere
        at = rng.randrange(len(text) + 1)
        text = text[:at] + "y" * rng.randrange(LONG_STATEMENT - 300, LONG_STATEMENT + 5) + text[at:]
    if rng.random() < 0.3:  # a deep run of brackets, closed or not
        at = rng.randrange(len(text) + 1)
        depth = rng.randrange(MAX_NESTING - 20, MAX_NESTING + 5)
        closing = ")" * rng.randrange(depth + 1)
        text = text[:at] + "(" * depth + rng.choice(["", "\n"]) + closing + text[at:]
    return text


def test_random_texts_pass_only_when_the_exact_scan_agrees() -> None:
    rng = random.Random(20261203)
    passed = 0
    for _ in range(5_000):
        text = _random_text(rng)
        if _shallow(text):
            passed += 1
            assert _within(text), text
    assert passed > 1_000  # the cases are not all rejected up front


@pytest.mark.parametrize(
    ("text", "shallow"),
    [
        ("x = 1\n", True),
        ("x = 1", True),
        ("", True),
        ("y" * (LONG_STATEMENT - 1), True),
        ("y" * LONG_STATEMENT, False),
        ("y" * LONG_STATEMENT + "\n", False),
        ("f(\n" + "a,\n" * 1_500 + ")\n", False),  # one statement over many lines
        ("a = 1 + \\\n" * 400, False),  # continuation lines are one statement
        ("a = 1\r\n" * 1_000, True),  # `\r\n` ends lines
        ("(" * MAX_NESTING + ")" * MAX_NESTING + "\n", True),
        ("(" * (MAX_NESTING + 1) + ")" * (MAX_NESTING + 1) + "\n", False),
        ("(\n" * (MAX_NESTING + 1), False),
        (")" * 50 + "\n" + "y" * (LONG_STATEMENT - 1), True),  # below zero still breaks
    ],
)
def test_edges_agree_with_the_exact_scan(text: str, shallow: bool) -> None:
    assert _shallow(text) is shallow
    assert _within(text) is shallow


def test_every_corpus_file_takes_the_fast_path_where_the_scan_passes_it() -> None:
    for path in sorted(CORPUS.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        assert _shallow(text) is _within(text), path

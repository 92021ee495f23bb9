"""`holds_word` answers exactly what `re.search(rf"\\b{word}\\b", text)` answers."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from ddplint.source import holds_word

CASES = [
    ("save", "torch.save(x)", True),
    ("save", "autosave = 1", False),
    ("save", "save_checkpoint()", False),
    ("save", "save", True),
    ("save", "_save save2 save", True),
    ("save", "ésave", False),  # a letter outside ASCII is a word character too
    ("save", "save\u0661", False),  # so is a digit of another script (ARABIC-INDIC ONE)
    ("save", "saves\nsave\n", True),
    ("LOCAL_RANK", 'os.environ["LOCAL_RANK"]', True),
    ("LOCAL_RANK", "MY_LOCAL_RANK = 1", False),
    ("x", "", False),
]


@pytest.mark.parametrize(("word", "text", "held"), CASES)
def test_word_boundaries(word: str, text: str, held: bool) -> None:
    assert holds_word(text, word) is held
    assert (re.search(rf"\b{re.escape(word)}\b", text) is not None) is held


def test_agrees_with_the_pattern_on_random_texts() -> None:
    pieces = ["ab", "a", "b", "_", " ", ".", "\n", "é", "1", "(", "ab_", "\u0663"]
    chooser = random.Random(7)
    for _ in range(3_000):
        text = "".join(chooser.choice(pieces) for _ in range(chooser.randint(0, 12)))
        word = chooser.choice(["ab", "a", "b_a", "ab1"])
        expected = re.search(rf"\b{re.escape(word)}\b", text) is not None
        assert holds_word(text, word) is expected, (text, word)


def test_agrees_with_the_pattern_on_the_project_sources() -> None:
    package = Path(__file__).resolve().parent.parent / "ddplint"
    words = ["save", "load", "rank", "barrier", "module", "distributed", "Finding", "cst"]
    for path in sorted(package.rglob("*.py"))[:80]:
        text = path.read_text(encoding="utf-8")
        for word in words:
            expected = re.search(rf"\b{word}\b", text) is not None
            assert holds_word(text, word) is expected, (path, word)

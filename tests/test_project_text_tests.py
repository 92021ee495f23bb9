"""The text tests that spare parses answer in time linear in the text: a module with rows of
`#` in its comments (mace's banner comments) made one search of a gap pattern written
`(?:…|#[^\\n]*)*` backtrack exponentially, and `ddplint check train.py` never finished.
The patterns match the same texts as those written that way."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ddplint.project import module_index, queries, text_tests
from ddplint.project.text_tests import NamesTorchDistributed

BANNER = "#" * 60
# The gaps as they were written before (each comment could stop at any `#`).
OLD_TEXT_GAP = r"(?:[\s\\)]|#[^\n]*)*"
OLD_QUERY_GAP = r"(?:\s|\\|#[^\n]*)*"
OLD_PREFIX_ARGS = r"(?:\s|\\|#[^\n]*|\(|\*|[A-Za-z_]\w*\s*=)*"
TAIL = r"[rRbBuU]{0,2}['\"]module(?:\.|['\"])"


@pytest.mark.timeout(20)
def test_banner_comments_do_not_stall_the_text_tests() -> None:
    text = f"import torch as th\nimport os\nth {BANNER}\n{BANNER} x\nos.distributed\n"
    assert NamesTorchDistributed().search(text) is None
    stripping = f"name.replace( {BANNER}\n{BANNER} x\n'other')\n"
    assert queries._MAY_STRIP_PREFIX.search(stripping) is None


def test_comments_between_the_names_still_count() -> None:
    text = "import torch as th\nx = (th  # the # library\n  # more\n).distributed.barrier()\n"
    assert NamesTorchDistributed().search(text) is True
    assert queries._MAY_STRIP_PREFIX.search("k.replace(  # a # b\n  'module.', '')")


_GAP_TEXT = st.text(alphabet=" \n\\)#.a(*=x'", max_size=12)


@settings(max_examples=400, deadline=None)
@given(_GAP_TEXT)
def test_the_gaps_match_as_written_before(gap: str) -> None:
    for old, new in (
        (OLD_TEXT_GAP, text_tests._GAP),
        (OLD_QUERY_GAP, queries._GAP),
    ):
        for after in ("", r"\.", r"\(", "x"):
            assert bool(re.fullmatch(old + after, gap)) == bool(re.fullmatch(new + after, gap))
    old_prefix = re.compile(
        rf"\b(?:replace|removeprefix|startswith|lstrip|len){OLD_QUERY_GAP}\("
        rf"{OLD_PREFIX_ARGS}{TAIL}"
    )
    for text in (f"k.replace{gap}('module.')", f"k.replace({gap}'module.')"):
        found = bool(queries._MAY_STRIP_PREFIX.search(text))
        before = bool(old_prefix.search(text))
        if "#" in gap:
            # A comment runs to the end of its line: `(#a\n='module.'` holds no keyword
            # argument `a=`, which the old pattern read into the comment. Never more.
            assert before or not found
        else:
            assert before == found


_WORDY_TEXT = st.text(alphabet="sa_veloedx. \n(", max_size=30)


@settings(max_examples=400, deadline=None)
@given(_WORDY_TEXT)
def test_words_match_as_the_word_pattern(text: str) -> None:
    words = text_tests.Words("save", "load", "seed_everything", "seed")
    old = re.compile(r"\b(?:load|save|seed|seed_everything)\b")
    assert words.pattern == old.pattern
    assert bool(words.search(text)) == bool(old.search(text))


def test_words_need_a_whole_word() -> None:
    words = text_tests.Words("save")
    assert words.search("torch.save(x, p)")
    assert words.search("model.save_pretrained(p)") is None
    assert words.search("no such name") is None


_DEFINING_TEXT = st.text(alphabet="defclas _x\n@(:", max_size=30)


@settings(max_examples=400, deadline=None)
@given(_DEFINING_TEXT)
def test_definitions_are_found_as_the_boundary_first_pattern_found_them(text: str) -> None:
    old = re.compile(r"\b(def|class)\s+(\w+)")
    assert module_index._DEFINED.findall(text) == old.findall(text)


def test_an_import_inside_a_from_statement_is_not_read_as_one() -> None:
    """`_scan` skips an `import` that starts inside a `from` statement (the last statement
    starting before it, found by bisection), and reads one after it."""
    from ddplint.project.import_scan import scanned_imports

    text = "from m import (a,  # import q\n    b)\nimport z\nfrom n import c; import w\n"
    found = scanned_imports(text)
    assert {"m", "m.a", "m.b", "z", "n", "n.c", "w"} <= found
    assert "q" not in found

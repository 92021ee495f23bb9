"""The parse skips LibCST's per-node checks, which only trees built by hand can fail: the
tree is the one a checked parse builds, and nodes built afterwards (fixes) are checked."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest

from ddplint.parsing import parse

CORPUS = Path(__file__).resolve().parent.parent / "corpus" / "lint"


@pytest.mark.parametrize("path", sorted(CORPUS.glob("*.py"))[:40], ids=lambda p: p.name)
def test_the_tree_is_the_one_a_checked_parse_builds(path: Path) -> None:
    data = path.read_bytes()
    parsed = parse(str(path), data)
    assert isinstance(parsed, tuple)
    checked = cst.parse_module(parsed[0])
    assert parsed[1].deep_equals(checked)
    assert parsed[1].code == checked.code


@pytest.mark.parametrize("source", [b"x = 1\n", b"def f(:\n"])
def test_nodes_built_after_a_parse_are_checked(source: bytes) -> None:
    parse("f.py", source)
    with pytest.raises(cst.CSTValidationError):
        cst.Name("1x")

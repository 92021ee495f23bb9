"""Checking a file leaves Python's cyclic garbage collector as it found it."""

from __future__ import annotations

import gc
from pathlib import Path

from ddplint.checker import check_file
from ddplint.rule import all_rules

EXAMPLE = Path(__file__).parent.parent / "corpus" / "lint" / "example_train.py"


def test_check_file_unfreezes_what_it_froze() -> None:
    assert gc.get_freeze_count() == 0
    result = check_file(str(EXAMPLE), EXAMPLE.read_bytes(), list(all_rules()))
    assert result.diagnostics and not result.internal_errors
    assert gc.get_freeze_count() == 0
    assert gc.isenabled()


def test_check_file_leaves_a_disabled_collector_disabled() -> None:
    gc.disable()
    try:
        check_file(str(EXAMPLE), EXAMPLE.read_bytes(), list(all_rules()))
        assert not gc.isenabled()
        assert gc.get_freeze_count() == 0
    finally:
        gc.enable()

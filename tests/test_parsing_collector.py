"""A parse runs no automatic garbage collection and leaves the collector as it found it."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from ddplint.parsing import parse

# Enough nodes that a parse with the collector on would trigger many young collections.
SOURCE = "".join(f"def f{i}(x):\n    return [x, {{'a': (x, {i})}}]\n" for i in range(1_000))


@pytest.fixture
def collections() -> Iterator[list[int]]:
    """Counts the collections that start while the test runs."""
    started: list[int] = []

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started.append(info["generation"])

    gc.callbacks.append(count)
    try:
        yield started
    finally:
        gc.callbacks.remove(count)


@pytest.mark.parametrize("enabled", [True, False])
def test_parse_leaves_the_collector_as_it_was(enabled: bool) -> None:
    was = gc.isenabled()
    (gc.enable if enabled else gc.disable)()
    try:
        frozen = gc.get_freeze_count()
        parsed = parse("big.py", SOURCE.encode())
        assert isinstance(parsed, tuple)
        assert gc.isenabled() is enabled
        assert gc.get_freeze_count() == frozen  # the tree is collectable again afterwards
    finally:
        (gc.enable if was else gc.disable)()


def test_no_collection_runs_during_a_parse(collections: list[int]) -> None:
    was = gc.isenabled()
    gc.enable()
    try:
        parsed = parse("big.py", SOURCE.encode())
        assert isinstance(parsed, tuple)
        assert collections == []
    finally:
        (gc.enable if was else gc.disable)()


def test_a_syntax_error_leaves_the_collector_on() -> None:
    was = gc.isenabled()
    gc.enable()
    try:
        assert not isinstance(parse("bad.py", b"def f(:\n"), tuple)
        assert gc.isenabled()
    finally:
        (gc.enable if was else gc.disable)()

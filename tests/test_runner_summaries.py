"""A run summarises a file it checks only where some other file may ask for the summary,
and reads the result of an unchanged file from the cache without parsing or summarising it."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import libcst
import pytest

import ddplint.project.summaries
import ddplint.runner
from ddplint.cache import Cache
from ddplint.context import FileContext
from ddplint.project.summaries import ModuleHead, ModuleSummary
from ddplint.rule import all_rules
from ddplint.runner import run

ALONE = """import torch
import torch.distributed as dist

dist.init_process_group("nccl")
if dist.get_rank() == 0:
    dist.barrier()
"""
DEVICE = 'x = torch.zeros(1).to("cuda:0")\n'

UTILS = """import torch.distributed as dist


def sync():
    dist.barrier()
"""

MAIN = """import torch.distributed as dist
from utils import sync

dist.init_process_group("nccl")
if dist.get_rank() == 0:
    sync()
"""


@pytest.fixture
def counts(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Parses and summaries of the run, by module source."""
    counted: Counter[str] = Counter()
    real_parse = libcst.parse_module
    real_summarize = ddplint.project.summaries.summarize

    def parse(source: str, *args: object, **kwargs: object) -> libcst.Module:
        counted["parse", source] += 1
        return real_parse(source, *args, **kwargs)  # type: ignore[arg-type]

    def summarize(ctx: FileContext, head: ModuleHead | None = None) -> ModuleSummary:
        counted["summary", ctx.source] += 1
        return real_summarize(ctx, head)

    monkeypatch.setattr(libcst, "parse_module", parse)
    monkeypatch.setattr(ddplint.runner, "summarize", summarize)
    return counted


def _codes(outcome: ddplint.runner.RunResult) -> list[tuple[str, int]]:
    return [(d.code, d.start.row) for d in outcome.diagnostics]


def test_a_file_checked_alone_is_not_summarised(tmp_path: Path, counts: Counter[str]) -> None:
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "train.py").write_text(ALONE)
    codes = set(all_rules())
    outcome = run([tmp_path / "train.py"], lambda _: codes, Cache(None), jobs=1)
    assert counts == Counter({("parse", ALONE): 1})
    assert ("DDP010", 6) in _codes(outcome)


def test_a_file_whose_finding_its_callers_decide_is_checked_again_unsummarised(
    tmp_path: Path, counts: Counter[str]
) -> None:
    """A DDP001 finding may be unproven by what the file's callers pass
    (`CALLERS_DECIDE`): the file is checked again with the project, on its one parse,
    and summarised only if the project asks (here nothing does)."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "train.py").write_text(ALONE + DEVICE)
    codes = set(all_rules())
    outcome = run([tmp_path / "train.py"], lambda _: codes, Cache(None), jobs=1)
    assert counts == Counter({("parse", ALONE + DEVICE): 1})
    assert ("DDP010", 6) in _codes(outcome) and ("DDP001", 7) in _codes(outcome)


def test_files_that_others_may_ask_about_are_summarised(
    tmp_path: Path, counts: Counter[str]
) -> None:
    """`utils.py` imports no project module: summarised as it is checked. `main.py` waits
    for the project and nothing asks about it: its imports are read from its head, and it
    is never summarised."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "utils.py").write_text(UTILS)
    (tmp_path / "main.py").write_text(MAIN)
    codes = set(all_rules())
    files = [tmp_path / "main.py", tmp_path / "utils.py"]
    outcome = run(files, lambda _: codes, Cache(None), jobs=1)
    assert counts == Counter({("parse", MAIN): 1, ("parse", UTILS): 1, ("summary", UTILS): 1})
    assert ("DDP010", 6) in _codes(outcome)


HELPERS = """import torch.distributed as dist
from utils import sync


def step():
    if dist.is_initialized():
        sync()
"""

CALLS_HELPERS = """import torch.distributed as dist
from helpers import step

dist.init_process_group("nccl")
if dist.get_rank() == 0:
    step()
"""


def test_a_waiting_file_is_summarised_from_its_one_parse_when_asked(
    tmp_path: Path, counts: Counter[str]
) -> None:
    """`helpers.py` waits for the project too, but `main.py` asks what `step` does: it is
    summarised then, from the parse its own check uses."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "utils.py").write_text(UTILS)
    (tmp_path / "helpers.py").write_text(HELPERS)
    (tmp_path / "main.py").write_text(CALLS_HELPERS)
    codes = set(all_rules())
    files = [tmp_path / "main.py", tmp_path / "helpers.py", tmp_path / "utils.py"]
    outcome = run(files, lambda _: codes, Cache(None), jobs=1)
    parses = {("parse", s): 1 for s in (CALLS_HELPERS, HELPERS, UTILS)}
    assert counts == Counter({**parses, ("summary", HELPERS): 1, ("summary", UTILS): 1})
    assert ("DDP010", 6) in _codes(outcome)


def test_an_unchanged_file_is_answered_from_the_cache_alone(
    tmp_path: Path, counts: Counter[str]
) -> None:
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "train.py").write_text(ALONE)
    codes = set(all_rules())
    first = run([tmp_path / "train.py"], lambda _: codes, Cache(tmp_path), jobs=1)
    counts.clear()
    again = run([tmp_path / "train.py"], lambda _: codes, Cache(tmp_path), jobs=1)
    assert counts == Counter()
    assert (again.parsed, again.cached) == (0, 1)
    assert _codes(again) == _codes(first)
    # An edit elsewhere in the project changes the key: checked again, from its text.
    (tmp_path / "notes.py").write_text("x = 1\n")
    changed = run([tmp_path / "train.py"], lambda _: codes, Cache(tmp_path), jobs=1)
    assert (changed.parsed, changed.cached) == (1, 0)
    assert _codes(changed) == _codes(first)

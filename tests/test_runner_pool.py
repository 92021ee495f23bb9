"""A run with worker processes parses each file once, as a run in one process does: the
worker that summarised a file also checks it (`ddplint.keeping_pool`), and the findings are
the same. Parses are counted, never timed."""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from ddplint import checker, runner
from ddplint.cache import Cache
from ddplint.keeping_pool import KeepingPool

UTILS = """\
import torch.distributed as dist


def sync():
    dist.barrier()
"""
WORKER = """\
import torch
import torch.distributed as dist

import utils


def step_{i}(model, batch):
    loss = model(batch).sum()
    if dist.get_rank() == 0:
        utils.sync()
    return loss
"""
CODES = {"DDP010"}
PARSE: Callable[..., object] = runner.parse


def _project(root: Path, count: int) -> list[Path]:
    (root / "pyproject.toml").write_text("")
    (root / "utils.py").write_text(UTILS)
    files = [root / "utils.py"]
    for i in range(count):
        (root / f"worker_{i}.py").write_text(WORKER.format(i=i))
        files.append(root / f"worker_{i}.py")
    return files


def _run(files: list[Path], jobs: int, log: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    def counting(path: str, data: bytes) -> object:
        with open(log, "a") as handle:  # written from the worker processes too
            handle.write(f"{Path(path).name}\n")
        return PARSE(path, data)

    monkeypatch.setattr(runner, "parse", counting)
    monkeypatch.setattr(checker, "parse", counting)
    result = runner.run(files, lambda _: CODES, Cache(None), jobs=jobs)
    return [f"{Path(d.path).name}:{d.start.row}:{d.code}" for d in result.diagnostics]


@pytest.mark.timeout(120)
@pytest.mark.skipif(
    "fork" not in multiprocessing.get_all_start_methods(), reason="the parse counter needs fork"
)
def test_workers_parse_each_file_once_and_find_the_same(tmp_path, monkeypatch):
    files = _project(tmp_path, runner.MIN_FILES_FOR_POOL + 2)
    monkeypatch.chdir(tmp_path)
    alone = _run(files, 1, tmp_path / "alone.log", monkeypatch)
    pooled = _run(files, 2, tmp_path / "pooled.log", monkeypatch)
    assert pooled == alone
    assert len(alone) == len(files) - 1  # the gated barrier of every worker_i.py
    parsed = (tmp_path / "pooled.log").read_text().split()
    assert sorted(parsed) == sorted(f.name for f in files)
    assert sorted((tmp_path / "alone.log").read_text().split()) == sorted(parsed)
    assert not [p for p in multiprocessing.active_children() if p.pid != os.getpid()]


def _first_failing(task: int) -> tuple[int, None]:
    if task == 3:
        raise ValueError("task three")
    return task, None


def _second_unused(task: int, kept: object, state: object) -> int:
    return task


@pytest.mark.timeout(60)
@pytest.mark.skipif(
    "fork" not in multiprocessing.get_all_start_methods(), reason="test functions need fork"
)
def test_a_failure_in_a_worker_is_raised_and_no_worker_is_left():
    with (
        pytest.raises(RuntimeError, match="task three"),
        KeepingPool(2, _first_failing, _second_unused) as pool,
    ):
        pool.first(list(range(6)), [1] * 6)
    assert not multiprocessing.active_children()

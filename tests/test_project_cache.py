"""The persistent cache never answers from a stale entry: a result depends on the checked
file and on the project around it, so editing, renaming or deleting a helper module, or
moving the project root, is checked afresh; an unchanged project is answered from the cache,
shared by one-file and whole-repository runs."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ddplint import runner
from ddplint.cache import Cache

MAIN = """\
import torch.distributed as dist

from helpers import log_metrics


def evaluate(metrics):
    if dist.get_rank() == 0:
        log_metrics(metrics)
"""
QUIET = """\
def log_metrics(metrics):
    print(metrics)
"""
COLLECTIVE = """\
import torch.distributed as dist


def log_metrics(metrics):
    dist.all_reduce(metrics)
    print(metrics)
"""


def _check(root: Path, *names: str) -> tuple[list[str], int]:
    """(findings as `file:row code`, results read from the cache) of a run on `names`."""
    result = runner.run([root / n for n in names], lambda _: {"DDP010"}, Cache(root), jobs=1)
    found = [f"{Path(d.path).name}:{d.start.row} {d.code}" for d in result.diagnostics]
    return found, result.cached


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "pyproject.toml").write_text("")
    (root / "main.py").write_text(MAIN)
    (root / "helpers.py").write_text(QUIET)
    monkeypatch.chdir(tmp_path)
    return root


def test_an_unchanged_project_is_answered_from_the_cache(project):
    assert _check(project, "main.py") == ([], 0)
    assert _check(project, "main.py") == ([], 1)
    # the whole-repository run reads the entry the one-file run wrote
    assert _check(project, "main.py", "helpers.py") == ([], 1)


def test_editing_a_helper_module(project):
    assert _check(project, "main.py") == ([], 0)
    (project / "helpers.py").write_text(COLLECTIVE)
    assert _check(project, "main.py") == (["main.py:8 DDP010"], 0)


def test_renaming_a_helper_module(project):
    (project / "helpers.py").unlink()
    (project / "metrics.py").write_text(COLLECTIVE)
    assert _check(project, "main.py") == ([], 0)
    (project / "metrics.py").rename(project / "helpers.py")
    assert _check(project, "main.py") == (["main.py:8 DDP010"], 0)


def test_deleting_a_helper_module(project):
    (project / "helpers.py").write_text(COLLECTIVE)
    assert _check(project, "main.py") == (["main.py:8 DDP010"], 0)
    (project / "helpers.py").unlink()
    assert _check(project, "main.py") == ([], 0)


def test_moving_the_project_root(project, tmp_path):
    (project / "helpers.py").write_text(COLLECTIVE)
    assert _check(project, "main.py") == (["main.py:8 DDP010"], 0)
    moved = tmp_path / "elsewhere" / "project"
    moved.parent.mkdir()
    shutil.move(project, moved)  # the cache folder moves with it
    assert _check(moved, "main.py") == (["main.py:8 DDP010"], 0)
    assert _check(moved, "main.py") == (["main.py:8 DDP010"], 1)


def test_editing_a_subfolders_requirements_file(tmp_path, monkeypatch):
    # a torch pin beside the script decides DDP040: the entry keyed before the edit is stale
    root = tmp_path / "project"
    (root / "app").mkdir(parents=True)
    (root / "pyproject.toml").write_text("")
    (root / "app" / "train.py").write_text(
        "import argparse\nimport torch.distributed as dist\n\n"
        "parser = argparse.ArgumentParser()\n"
        'parser.add_argument("--local_rank", type=int, default=0)\n'
        "args = parser.parse_args()\n"
        'dist.init_process_group("nccl")\n'
    )
    (root / "app" / "run.sh").write_text("python -m torch.distributed.launch train.py\n")
    (root / "app" / "requirements.txt").write_text("torch==1.8.1\n")
    monkeypatch.chdir(tmp_path)

    def check() -> tuple[list[str], int]:
        result = runner.run([root / "app" / "train.py"], lambda _: {"DDP040"}, Cache(root), jobs=1)
        return [d.code for d in result.diagnostics], result.cached

    assert check() == ([], 0)
    (root / "app" / "requirements.txt").write_text("torch==2.1.0\n")
    assert check() == (["DDP040"], 0)


def test_editing_a_settings_file(tmp_path, monkeypatch):
    # a setting every config leaves off makes its branch dormant: turning it on in a YAML
    # file of the project makes the entry keyed before the edit stale
    root = tmp_path / "project"
    root.mkdir()
    (root / "pyproject.toml").write_text("")
    (root / "train.py").write_text(
        "import random\nimport torch.multiprocessing as mp\nimport torch.distributed as dist\n"
        "from settings import cfg\n\n\ndef worker(i):\n"
        '    dist.init_process_group("nccl", rank=i, world_size=2)\n\n\n'
        "def main():\n    if cfg.fixed_seed:\n        random.seed(1)\n"
        "    mp.spawn(worker, nprocs=2)\n\n\nif __name__ == '__main__':\n    main()\n"
    )
    (root / "settings.py").write_text("import types\n\ncfg = types.SimpleNamespace()\n")
    (root / "base.yaml").write_text("fixed_seed: false\n")
    monkeypatch.chdir(tmp_path)

    def check() -> tuple[list[tuple[str, bool]], int]:
        result = runner.run([root / "train.py"], lambda _: {"DDP041"}, Cache(root), jobs=1)
        return [(d.code, d.unproven) for d in result.diagnostics], result.cached

    assert check() == ([("DDP041", True)], 0)
    assert check() == ([("DDP041", True)], 1)
    (root / "base.yaml").write_text("fixed_seed: true\n")
    assert check() == ([("DDP041", False)], 0)

"""Shared helpers for the ddplint tests."""

from __future__ import annotations

import json
import shutil
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from ddplint.cli import main

REPO = Path(__file__).resolve().parent.parent
LINT_CORPUS = REPO / "corpus" / "lint"
# Every corpus/lint case: a script, or a folder holding a multi-file project.
LINT_CASES = sorted(
    p.name
    for p in LINT_CORPUS.iterdir()
    if p.suffix == ".py" or (p.is_dir() and any(p.rglob("*.py")))
)


def corpus_case_project(case: str, root: Path) -> Path:
    """Copy the corpus/lint case `case` (a script, or a folder holding a multi-file
    project) into `root` as the only content of a project of its own (an empty
    `pyproject.toml` marks the root) and return `root`. A case is checked as a user checks
    their project: its findings depend neither on the other cases nor on ddplint's own
    files, which share the repository's project root."""
    source = LINT_CORPUS / case
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text("", encoding="utf-8")
    if source.is_dir():
        shutil.copytree(source, root / case)
    else:
        shutil.copyfile(source, root / case)
    return root


@dataclass
class CliResult:
    code: int
    out: str
    err: str

    def json(self) -> list[dict]:
        return json.loads(self.out)


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., CliResult]:
    """Run `ddplint ARGS` in-process and capture its exit code and output."""

    def invoke(*args: str) -> CliResult:
        code = main([str(a) for a in args])
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return invoke


@pytest.fixture
def write(tmp_path: Path) -> Callable[[str, str], Path]:
    """Write a dedented file below tmp_path and return its path."""

    def make(name: str, source: str) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source), encoding="utf-8")
        return path

    return make


DIVIDED_LOSS = """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def train(model, loader, optimizer):
    model = DDP(model)
    for x, y in loader:
        loss = model(x).sum()
        loss = loss / dist.get_world_size()
        loss.backward()
        optimizer.step()
"""

UNWRAPPED_SAVE = """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

model = DDP(Net())
model.module.load_state_dict(initial_weights)
if dist.get_rank() == 0:
    torch.save(model.state_dict(), f"ckpt_{dist.get_rank()}.pt")
"""

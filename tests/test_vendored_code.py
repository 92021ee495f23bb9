"""A copy of another project kept inside this one, which the rest imports by its package
name as an installed library (`furnace/apex/` with its own `setup.py`, and `from
apex.parallel import ...` elsewhere), is not the project's code: findings in its scripts
are unproven. A nested project nothing imports by name is the project's own."""

from __future__ import annotations

import os

import pytest

from ddplint.domain.vendored_code import vendored_mark

EXAMPLE = """\
import torch
import torch.distributed as dist

dist.init_process_group("nccl")
model = torch.nn.Linear(4, 4).to("cuda:0")
"""
USES_IT = "from apex.parallel import DistributedDataParallel\n"


def _project(write, imports: str, whole_repository: bool = True) -> tuple[str, str]:
    write("pyproject.toml", "[project]\nname = 'outer'\n")
    write("train.py", imports + "print('training')\n")
    write("furnace/apex/setup.py", "from setuptools import setup\nsetup(name='apex')\n")
    if whole_repository:
        write("furnace/apex/README.md", "# apex\n")
        write("furnace/apex/tests/test_amp.py", "def test_nothing():\n    pass\n")
    example = write("furnace/apex/examples/imagenet/main.py", EXAMPLE)
    return str(example), str(example.parents[3])


@pytest.fixture
def outside(tmp_path, monkeypatch):
    """Run from a folder outside the project, as a user checking a checkout path."""
    elsewhere = tmp_path.parent / f"{tmp_path.name}-cwd"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)


def test_a_copy_the_project_imports_by_name_is_vendored(write, outside):
    example, _ = _project(write, USES_IT)
    assert vendored_mark(example) == os.path.join("furnace", "apex")


def test_a_nested_project_nothing_imports_is_the_projects_own(write, outside):
    example, _ = _project(write, "import torch\n")
    assert vendored_mark(example) is None


def test_a_workspace_member_imported_by_a_sibling_is_the_projects_own(write, outside):
    """A package with its own packaging and nothing of a repository around it (no README,
    no tests or docs beside its code) is a member of the project, not a copy."""
    example, _ = _project(write, USES_IT, whole_repository=False)
    assert vendored_mark(example) is None


def test_checking_the_copy_itself_is_not_checking_a_vendored_copy(write, monkeypatch):
    example, _ = _project(write, USES_IT)
    monkeypatch.chdir(os.path.dirname(os.path.dirname(os.path.dirname(example))))
    assert vendored_mark(example) is None


def test_findings_in_a_vendored_copy_are_unproven(cli, write, outside):
    example, _ = _project(write, USES_IT)
    shown = cli("check", "--exit-zero", "--output-format", "json", "--preview", example)
    hidden = cli("check", "--exit-zero", "--output-format", "json", example)
    assert [d["code"] for d in hidden.json()] == []
    assert [d["code"] for d in shown.json()] == ["DDP001"]
    assert "is a copy of another project" in shown.json()[0]["message"]

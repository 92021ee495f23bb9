"""Test code (a `tests/` folder, `test_*.py`, `conftest.py`) runs under pytest as the
project's tests, not as a training job: what is found there is unproven."""

from __future__ import annotations

import os

import pytest

from ddplint.domain import test_modules

FIXTURES = """\
import os

import torch
import torch.distributed as dist


def build_single_rank_group(port="29561"):
    os.environ.setdefault("RANK", "0")
    os.environ.setdefault("WORLD_SIZE", "1")
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", port)
    torch.cuda.set_device(0)
    dist.init_process_group("nccl")
"""


@pytest.mark.parametrize(
    ("path", "script", "mark"),
    [
        ("tests/test_runtime/_fixtures.py", False, "tests/"),
        ("pkg/unit_tests/helpers.py", False, "pkg/unit_tests/"),
        ("test/test_attack.py", True, None),  # an evaluation script under `test/`
        ("test_loader.py", False, "test_loader.py"),
        ("conftest.py", False, "conftest.py"),
        ("test_ddp.py", True, None),  # a script trying DDP out, run as a program
        ("ddp_test.py", False, None),
        ("train.py", False, None),
        ("evaluation/test.py", False, None),
    ],
)
def test_what_is_marked_as_test_code(tmp_path, path, script, mark) -> None:
    expected = None if mark is None else mark.replace("/", os.sep)
    assert test_modules.test_code_mark(str(tmp_path / path), str(tmp_path), script) == expected


def test_a_finding_in_test_code_is_unproven(cli, write) -> None:
    root = write("pyproject.toml", "[project]\nname = 'demo'\n").parent
    write("tests/_fixtures.py", FIXTURES)
    out = cli("check", "--exit-zero", "--select", "DDP001", str(root)).out
    assert "DDP001" not in out
    shown = cli("check", "--exit-zero", "--preview", "--select", "DDP001", str(root)).out
    assert "DDP001 [preview]" in shown and "is test code" in shown


def test_a_file_under_tests_that_a_command_launches_is_a_program(cli, write) -> None:
    """apex's `tests/L1/common/main_amp.py` has no `__main__` block, but the project's
    `run_test.sh` starts it with a distributed launcher: a training job, not a test."""
    root = write("pyproject.toml", "[project]\nname = 'demo'\n").parent
    write("tests/L1/_fixtures.py", FIXTURES + "\n\nbuild_single_rank_group()\n")
    write("tests/L1/run_test.sh", "torchrun --nproc_per_node=2 _fixtures.py\n")
    out = cli("check", "--exit-zero", "--select", "DDP001", str(root)).out
    assert "DDP001" in out and "[preview]" not in out

"""DDP065: a rank test that names a function instead of calling it holds on every rank.
The function may be in the file or in another module of the project; a name that also
holds a value (a parameter, a variable) is never taken for the function."""

from __future__ import annotations

import json
from pathlib import Path

from ddplint.cli import main

HELPERS = """\
import torch.distributed as dist


def is_master():
    return not dist.is_initialized() or dist.get_rank() == 0


def get_world_size():
    return dist.get_world_size() if dist.is_initialized() else 1
"""
TRAIN = """\
import torch
import torch.distributed as dist
from helpers import get_world_size, is_master


def run(model, steps):
    dist.init_process_group("nccl")
    for step in range(steps):
        {test}
            torch.save(model.state_dict(), "last.pt")
    print(get_world_size())
"""


def findings(tmp_path: Path, capsys, test: str) -> list[dict]:
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    (tmp_path / "helpers.py").write_text(HELPERS, encoding="utf-8")
    (tmp_path / "train.py").write_text(TRAIN.format(test=test), encoding="utf-8")
    args = ["check", "--no-cache", "--exit-zero", "--output-format", "json"]
    main([*args, "--select", "DDP065", str(tmp_path)])
    return json.loads(capsys.readouterr().out)


def test_a_helper_of_another_module_named_uncalled(tmp_path, capsys):
    (found,) = findings(tmp_path, capsys, "if is_master:")
    assert found["filename"].endswith("train.py")
    assert "runs on every rank, where only the main process should run it" in found["message"]
    assert "call it: `is_master()`" in found["message"]


def test_an_operand_of_a_longer_test_and_a_negation(tmp_path, capsys):
    (found,) = findings(tmp_path, capsys, "if step % 10 == 0 and is_master:")
    assert "on every rank (wherever the rest of the test holds)" in found["message"]
    (found,) = findings(tmp_path, capsys, "if not is_master:")
    assert "on no rank, where only the ranks other than the main one should" in found["message"]


def test_called_or_a_function_that_is_no_rank_test_is_left_alone(tmp_path, capsys):
    assert findings(tmp_path, capsys, "if is_master():") == []
    assert findings(tmp_path, capsys, "if get_world_size:") == []


def test_torch_question_about_the_job_uncalled(tmp_path, capsys):
    (found,) = findings(tmp_path, capsys, "if torch.distributed.is_initialized:")
    assert "runs even where no process group was started" in found["message"]


def test_a_negated_operand_leaves_the_rest_of_the_test_to_decide(tmp_path, capsys):
    test = "if not torch.distributed.is_available or torch.distributed.get_rank() == 0:"
    (found,) = findings(tmp_path, capsys, test)
    assert (
        "`not torch.distributed.is_available` never holds and the rest of the test"
        in (found["message"])
    )

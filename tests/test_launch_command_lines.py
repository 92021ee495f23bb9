"""Which commands of a project start a script (`ddplint.domain.launch_commands`): a
commented-out line starts nothing, and a launch of `${DIR}/run_squad.py` starts a
`run_squad.py`, not any script of the project."""

from __future__ import annotations

from pathlib import Path

import pytest

from ddplint.domain import launch_commands
from ddplint.domain.launch_commands import launched_as_one_process
from ddplint.project_files import project_files

SCRIPT = """\
import argparse
import torch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
args = parser.parse_args()
if args.local_rank != -1:
    dist.init_process_group("nccl")
"""


def _one_process(tmp_path: Path, commands: dict[str, str]) -> bool:
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    (tmp_path / "run_ner.py").write_text(SCRIPT, encoding="utf-8")
    for name, text in commands.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    project_files.cache_clear()
    launch_commands._commands.cache_clear()
    return launched_as_one_process(str(tmp_path / "run_ner.py"), str(tmp_path))


PLAIN = "CUDA_VISIBLE_DEVICES=$GPU python3 run_ner.py --do_train\n"


def test_plain_commands_launch_one_process(tmp_path: Path) -> None:
    assert _one_process(tmp_path, {"run.sh": PLAIN})


def test_a_commented_out_launch_starts_nothing(tmp_path: Path) -> None:
    text = PLAIN + "# torchrun --nproc_per_node=8 run_ner.py --do_train\n"
    assert _one_process(tmp_path, {"run.sh": text})


def test_an_active_launch_starts_several(tmp_path: Path) -> None:
    text = PLAIN + "torchrun --nproc_per_node=8 run_ner.py --do_train\n"
    assert not _one_process(tmp_path, {"run.sh": text})


def test_a_launch_of_another_named_script_leaves_this_one_alone(tmp_path: Path) -> None:
    card = "python -m torch.distributed.launch --nproc_per_node=2 ${SQUAD_DIR}/run_squad.py\n"
    assert _one_process(tmp_path, {"run.sh": PLAIN, "lib/model_card/README.md": card})


def test_a_launch_of_a_script_named_by_a_variable_may_start_any(tmp_path: Path) -> None:
    text = PLAIN + "torchrun --nproc_per_node=8 $ENTRY --do_train\n"
    assert not _one_process(tmp_path, {"run.sh": text})


@pytest.mark.parametrize(
    ("command", "one"),
    [
        ("CUDA_VISIBLE_DEVICES=0 torchrun --nproc_per_node=1 run_ner.py --do_eval\n", True),
        ("python -m torch.distributed.launch --nproc_per_node 1 run_ner.py\n", True),
        ("torchrun --nnodes=1 --nproc_per_node=1 run_ner.py\n", True),
        ("torchrun --nproc_per_node=2 run_ner.py\n", False),
        ("torchrun --nproc_per_node=1 --nnodes=4 run_ner.py\n", False),
        ("srun torchrun --nproc_per_node=1 run_ner.py\n", False),
        ("torchrun --nproc_per_node=1 run_ner.py --gpus 0,1\n", False),
    ],
)
def test_a_launcher_starting_one_process_on_one_node(
    tmp_path: Path, command: str, one: bool
) -> None:
    assert _one_process(tmp_path, {"README.md": command}) is one


def test_one_launched_process_beside_a_launch_of_several_is_not_alone(tmp_path: Path) -> None:
    text = "torchrun --nproc_per_node=1 run_ner.py\ntorchrun --nproc_per_node=4 run_ner.py\n"
    assert not _one_process(tmp_path, {"run.sh": text})


ALWAYS_JOINS = """\
import torch.distributed as dist

dist.init_process_group("nccl")
"""


@pytest.mark.parametrize(
    ("readme", "alone"),
    [
        ("torchrun --nproc_per_node=1 eval.py\n", False),  # a template: the user sets N
        ("torchrun --nproc_per_node=1 eval.py\ntorchrun --nproc_per_node=8 train.py\n", True),
        ("torchrun --nproc_per_node=1 eval.py\ntorchrun --nproc_per_node=8 eval.py\n", False),
    ],
)
def test_one_launched_process_counts_where_the_project_launches_several_elsewhere(
    tmp_path: Path, readme: str, alone: bool
) -> None:
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    for name in ("eval.py", "train.py"):
        (tmp_path / name).write_text(ALWAYS_JOINS, encoding="utf-8")
    (tmp_path / "README.md").write_text(readme, encoding="utf-8")
    project_files.cache_clear()
    launch_commands._commands.cache_clear()
    assert launched_as_one_process(str(tmp_path / "eval.py"), str(tmp_path)) is alone

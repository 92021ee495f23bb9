"""Whether a script shows it runs on more than one machine (`ddplint.domain.node_counts`):
what makes DDP018's global-rank device a proven harm."""

from __future__ import annotations

from pathlib import Path

import pytest

from ddplint.domain import launch_commands
from ddplint.domain.node_counts import runs_on_several_nodes
from ddplint.project_files import project_files

SCRIPT = "import torch.distributed as dist\ndist.init_process_group('nccl')\n"


def _several(tmp_path: Path, script: str, files: dict[str, str] | None = None) -> bool:
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    for name, text in (files or {}).items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    path = tmp_path / "train.py"
    path.write_text(script, encoding="utf-8")
    project_files.cache_clear()
    launch_commands._commands.cache_clear()
    return runs_on_several_nodes(str(path), script, ())


@pytest.mark.parametrize(
    "option",
    [
        "parser.add_argument('--nnodes', type=int, default=1)",
        'parser.add_argument("--num_nodes", type=int, default=1)',
        "parser.add_argument('--node-rank', type=int, default=0)",
        "node = int(os.environ['SLURM_NODEID'])",
        'node = int(os.environ.get("NODE_RANK", 0))',
    ],
)
def test_a_node_option_or_variable_of_the_script_counts(tmp_path: Path, option: str) -> None:
    assert _several(tmp_path, SCRIPT + option + "\n")


@pytest.mark.parametrize(
    ("name", "command", "several"),
    [
        ("run.sh", "torchrun --nnodes=2 --nproc_per_node=8 train.py", True),
        ("run.sh", "torchrun --nnodes $NNODES --nproc_per_node=8 train.py", True),
        ("README.md", "python -m torch.distributed.run --nnodes 1:4 train.py", True),
        ("job.slurm", "#SBATCH --nodes=4\nsrun python train.py", True),
        ("job.sbatch", "#SBATCH -N 2\nsrun python train.py", True),
        ("run.sh", "torchrun --nnodes=1 --nproc_per_node=8 train.py", False),
        ("job.slurm", "#SBATCH --nodes=1\nsrun python train.py", False),
        ("README.md", "python generate.py -N 2 --out samples", False),
        ("run.sh", "torchrun --standalone --nproc_per_node=4 train.py", False),
    ],
)
def test_the_projects_commands_count(
    tmp_path: Path, name: str, command: str, several: bool
) -> None:
    assert _several(tmp_path, SCRIPT, {name: command}) is several


def test_nothing_in_sight_is_one_node(tmp_path: Path) -> None:
    assert not _several(tmp_path, SCRIPT + "rank = dist.get_rank()\n")


def test_a_source_with_no_file_has_no_project() -> None:
    assert not runs_on_several_nodes("<stdin>", SCRIPT, ())


def test_another_examples_launch_says_nothing_of_this_script(tmp_path: Path) -> None:
    files = {"ex_001/job.sbatch": "#SBATCH --nodes=2\nsrun python ex_001/train.py\n"}
    (tmp_path / "ex_000").mkdir()
    script = tmp_path / "ex_000" / "train.py"
    script.write_text(SCRIPT, encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    project_files.cache_clear()
    launch_commands._commands.cache_clear()
    assert not runs_on_several_nodes(str(script), SCRIPT, ())


NODE_OPTION = SCRIPT + "parser.add_argument('--nnodes', type=int, default=1)\n"


@pytest.mark.parametrize(
    ("name", "command", "several"),
    [
        ("README.md", "torchrun --nnodes=1 --nproc_per_node=$NGPU train.py", False),
        ("run.sh", "torchrun --nproc_per_node=8 train.py", False),
        ("job.slurm", "#SBATCH --nodes=1\nsrun python train.py", False),
        ("run.sh", "torchrun --nnodes=2 --nproc_per_node=8 train.py", True),
        ("run.sh", "deepspeed --num_nodes=2 train.py", True),
        ("run.sh", "mpirun -np 16 --hostfile hosts python train.py", True),
        ("job.slurm", "#SBATCH --nodes=1\nsrun python train.py\ndeepspeed train.py", True),
    ],
)
def test_documented_launches_of_one_node_outweigh_a_node_option(
    tmp_path: Path, name: str, command: str, several: bool
) -> None:
    """A node option the script offers counts unless every launch the project documents
    starts one node; a launcher that says its node count otherwise leaves it counted."""
    assert _several(tmp_path, NODE_OPTION, {name: command}) is several


def test_a_node_option_without_documented_launches_counts(tmp_path: Path) -> None:
    assert _several(tmp_path, NODE_OPTION, {"README.md": "Train with the script."})

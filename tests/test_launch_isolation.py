"""A project whose own launch gives each process one GPU (`launched_on_own_gpus`): a
wrapper setting `CUDA_VISIBLE_DEVICES` from a node-local rank, or Slurm binding one GPU
per task. Device 0 is then each process's own GPU, and the findings that say every
process lands on GPU 0 are unproven (DDP001, DDP020) or silent (DDP033)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ddplint.domain import launch_commands
from ddplint.domain.launch_commands import launched_on_own_gpus
from ddplint.project_files import project_files


def _isolated(tmp_path: Path, name: str, text: str) -> bool:
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    (tmp_path / "train.py").write_text("import torch\n", encoding="utf-8")
    (tmp_path / name).write_text(text, encoding="utf-8")
    project_files.cache_clear()
    launch_commands._commands.cache_clear()
    return launched_on_own_gpus(str(tmp_path / "train.py"))


@pytest.mark.parametrize(
    ("name", "text", "isolated"),
    [
        (
            "gpu_affinity.sh",
            'gpu=$((3 - ${PMI_LOCAL_RANK} % 4))\nexport CUDA_VISIBLE_DEVICES=$gpu\nexec "$@"\n',
            True,
        ),
        ("wrap.sh", "export CUDA_VISIBLE_DEVICES=$SLURM_LOCALID\npython train.py\n", True),
        ("job.sbatch", "#SBATCH --nodes=2\nsrun --gpus-per-task=1 python train.py\n", True),
        ("job.sbatch", "srun --gpu-bind=single:1 python train.py\n", True),
        ("run.sh", "CUDA_VISIBLE_DEVICES=0,1,2,3 torchrun --nproc_per_node=4 train.py\n", False),
        (
            "run.sh",
            "export CUDA_VISIBLE_DEVICES=$GPUS\ntorchrun --nproc_per_node=4 train.py\n",
            False,
        ),
        ("README.md", "Set `CUDA_VISIBLE_DEVICES` to pick the GPUs.\n", False),
        ("NOTES.md", "export CUDA_VISIBLE_DEVICES=$SLURM_LOCALID in a job script\n", False),
        ("wrap.sh", "# export CUDA_VISIBLE_DEVICES=$SLURM_LOCALID\npython train.py\n", False),
        ("job.sbatch", "#SBATCH --gpus-per-task=1\nsrun python train.py\n", True),
    ],
)
def test_a_launch_that_gives_each_process_its_gpu(
    tmp_path: Path, name: str, text: str, isolated: bool
) -> None:
    assert _isolated(tmp_path, name, text) is isolated


def test_a_source_with_no_file_has_no_launch() -> None:
    assert not launched_on_own_gpus("<stdin>")

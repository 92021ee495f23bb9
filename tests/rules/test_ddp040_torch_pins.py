"""DDP040: the torch a project pins decides what torch.distributed.launch passes: before
2.0 it passes `--local_rank`, which an underscore-only parser accepts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ddplint.cli import main
from ddplint.domain.versions import pinned_torch, shown_pin

TRAIN = """\
import argparse
import os
import torch
import torch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=0)
args = parser.parse_args()
torch.cuda.set_device(args.local_rank)
dist.init_process_group("nccl")
"""
RUN = "python -m torch.distributed.launch --nproc_per_node=2 train.py\n"


def findings(tmp_path: Path, capsys, files: dict[str, str]) -> list[dict]:
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    args = ["check", "--no-cache", "--exit-zero", "--output-format", "json", "--preview"]
    main([*args, "--select", "DDP040", str(tmp_path)])
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize(
    "readme",
    [
        "pip install torch==1.8.1+cu102 torchvision==0.9.1+cu102\n",
        "conda install pytorch=1.11.0 -c pytorch\n",
        "pip install 'torch<2.0'\n",
        "conda install pytorch torchvision torchaudio cudatoolkit=11.3 -c pytorch -y\n",
    ],
    ids=["pip pin", "conda pin", "upper bound", "conda cudatoolkit"],
)
def test_a_pin_below_torch_2_leaves_the_underscore_option_alone(tmp_path, capsys, readme):
    files = {"train.py": TRAIN, "run.sh": RUN, "README.md": readme}
    assert findings(tmp_path, capsys, files) == []


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("requirements.txt", "numpy\ntorch==1.8.1\ntorchvision==0.9.1\n"),
        ("env.yml", "dependencies:\n  - python=3.8\n  - pytorch=1.11.0\n"),
        ("cog.yaml", 'build:\n  python_packages:\n    - "torch==1.11.0"\n'),
    ],
    ids=["requirements", "conda environment", "cog"],
)
def test_a_pin_in_a_requirements_file_counts(tmp_path, capsys, name, text):
    files = {"train.py": TRAIN, "run.sh": RUN, name: text}
    assert findings(tmp_path, capsys, files) == []


@pytest.mark.parametrize(
    "base",
    [
        "FROM nvcr.io/nvidia/pytorch:21.07-py3\n",
        "FROM pytorch/pytorch:1.10.0-cuda11.3-cudnn8-runtime\n",
    ],
    ids=["NVIDIA release before 23.03", "PyTorch image 1.10"],
)
def test_a_docker_base_image_with_torch_1_counts_as_a_pin(tmp_path, capsys, base):
    files = {"train.py": TRAIN, "run.sh": RUN, "Dockerfile": base + "RUN pip install timm\n"}
    assert findings(tmp_path, capsys, files) == []


@pytest.mark.parametrize(
    "base",
    [
        "FROM nvcr.io/nvidia/pytorch:23.10-py3\n",
        "FROM pytorch/pytorch:2.1.0-cuda12.1-cudnn8-devel\n",
    ],
    ids=["NVIDIA release with torch 2", "PyTorch image 2.1"],
)
def test_a_docker_base_image_with_torch_2_keeps_the_finding(tmp_path, capsys, base):
    files = {"train.py": TRAIN, "run.sh": RUN, "Dockerfile": base}
    (found,) = findings(tmp_path, capsys, files)
    assert "(the torch the project installs)" in found["message"]


def test_a_requirements_file_pinning_torch_2_keeps_the_finding(tmp_path, capsys):
    files = {"train.py": TRAIN, "run.sh": RUN, "requirements.txt": "torch==2.1.0\n"}
    (found,) = findings(tmp_path, capsys, files)
    assert "(the torch the project installs)" in found["message"]


@pytest.mark.parametrize(
    "text",
    [
        "torch\n# torch==1.9.0+cu111 -f https://download.pytorch.org/whl/torch_stable.html\n",
        "torch>=1.8\ntorchvision==0.9.1\n",
    ],
    ids=["commented-out pin", "lower bound only"],
)
def test_a_requirements_file_leaving_torch_unbounded_keeps_the_finding(tmp_path, capsys, text):
    files = {"train.py": TRAIN, "run.sh": RUN, "requirements.txt": text}
    (found,) = findings(tmp_path, capsys, files)
    assert "from torch 2.0 on (the torch the project installs) passes" in found["message"]
    assert not found["unproven"]


@pytest.mark.parametrize(
    "files",
    [
        {"README.md": "```sh\npip install torch torchvision\n```\n"},
        {"README.md": "```sh\nconda install pytorch torchvision -c pytorch\n```\n"},
        {"setup.py": 'setup(install_requires=["torch>=1.8", "numpy"])\n'},
        {"README.md": "## Requirements\n- python 3.8\n- pytorch >= 1.8.1\n"},
    ],
    ids=["pip install torch", "conda install pytorch", "setup.py lower bound", "README list"],
)
def test_an_install_of_todays_torch_proves_the_finding(tmp_path, capsys, files):
    (found,) = findings(tmp_path, capsys, {"train.py": TRAIN, "run.sh": RUN, **files})
    assert not found["unproven"]


@pytest.mark.parametrize(
    "files",
    [
        {},
        {"requirements.txt": "numpy==1.24.0\n"},
        {"README.md": "Trained with PyTorch 1.7.1 on 8 V100s.\n"},
    ],
    ids=["no requirements", "other packages only", "README prose"],
)
def test_a_torch_the_project_does_not_name_leaves_the_finding_unproven(tmp_path, capsys, files):
    """Code of the torch 1.x years may assume the launcher of its time, which passes
    `--local_rank`: the failure needs a torch 2 the project does not say it installs."""
    (found,) = findings(tmp_path, capsys, {"train.py": TRAIN, "run.sh": RUN, **files})
    assert found["unproven"] and "from torch 2.0 on passes" in found["message"]


def test_a_pin_of_torch_2_keeps_the_finding(tmp_path, capsys):
    files = {"train.py": TRAIN, "run.sh": RUN, "README.md": "pip install torch==2.1.0\n"}
    (found,) = findings(tmp_path, capsys, files)
    assert "(the torch the project installs)" in found["message"]


def test_a_sibling_subprojects_pin_does_not_count(tmp_path, capsys):
    files = {
        "app/train.py": TRAIN,
        "app/run.sh": "python -m torch.distributed.launch --nproc_per_node=2 train.py\n",
        "other/README.md": "pip install torch==1.6.0\n",
    }
    (found,) = findings(tmp_path, capsys, files)
    assert "pins allow" not in found["message"]


def test_required_given_any_true_value_is_required(tmp_path, capsys):
    train = TRAIN.replace("type=int, default=0)", "required=int)")
    (found,) = findings(tmp_path, capsys, {"train.py": train})
    assert "`--local_rank` is required" in found["message"]


@pytest.mark.parametrize(
    ("line", "newest", "shown"),
    [
        ("torch>1.5,<1.10", (1, 9, 99), "1.9.x"),
        ("torch >= 1.8, < 2.0", (1, 99), "1.x"),
        ("torch<1.13.1", (1, 13, 0, 99), "1.13.0.x"),
        ("torch==1.8.1", (1, 8, 1), "1.8.1"),
    ],
)
def test_an_upper_bound_after_a_lower_one_pins_the_release_below_it(tmp_path, line, newest, shown):
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    (tmp_path / "requirements.txt").write_text(f"numpy\n{line}\n", encoding="utf-8")
    (tmp_path / "train.py").write_text(TRAIN, encoding="utf-8")
    pinned = pinned_torch(str(tmp_path), str(tmp_path / "train.py"))
    assert pinned == newest
    assert shown_pin(pinned) == shown


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("docs/INSTALL.md", "pip install torch==1.10.0+cu111 torchvision==0.11.0+cu111\n"),
        ("requirement.txt", "numpy\npytorch==1.2.0\n"),
    ],
    ids=["install document", "singular requirement file"],
)
def test_a_pin_in_the_install_document_or_a_requirement_file_counts(tmp_path, capsys, name, text):
    files = {"train.py": TRAIN, "run.sh": RUN, name: text}
    assert findings(tmp_path, capsys, files) == []


def test_a_version_the_readme_only_states_pins_nothing(tmp_path, capsys):
    # pip installs today's torch whatever the prose says the project was built with
    text = "The project is built with PyTorch 1.7.1, Python 3.7, CUDA 10.1.\n"
    files = {"train.py": TRAIN, "run.sh": RUN, "README.md": text}
    assert len(findings(tmp_path, capsys, files)) == 1


@pytest.mark.parametrize(
    ("run", "found"),
    [
        ("/usr/bin/python3.6 -m torch.distributed.launch --nproc_per_node=8 train.py\n", 0),
        ("python3.7 -m torch.distributed.launch --nproc_per_node=8 train.py\n", 0),
        ("python3.8 -m torch.distributed.launch --nproc_per_node=8 train.py\n", 1),
        ("python3.6 -m torch.distributed.launch train.py\npython tools/eval.py\n", 0),
        ("python3.6 -m torch.distributed.launch train.py\ntorchrun tools/tune.py\n", 1),
    ],
    ids=["python3.6", "python3.7", "python3.8", "other commands", "another launch"],
)
def test_an_interpreter_too_old_for_torch_2_bounds_the_torch(tmp_path, capsys, run, found):
    """A launch run by Python 3.6 or 3.7 cannot have torch 2.0 (the newest torch for 3.7
    is 1.13): its launcher passes `--local_rank`. Commands that start no launcher do not
    count; another launch whose interpreter is unknown leaves the torch unbounded."""
    files = {"train.py": TRAIN, "run.sh": run}
    assert len(findings(tmp_path, capsys, files)) == found


def test_a_conda_install_with_pytorch_cuda_takes_todays_torch(tmp_path, capsys):
    readme = "conda install pytorch torchvision pytorch-cuda=12.1 -c pytorch -c nvidia\n"
    files = {"train.py": TRAIN, "run.sh": RUN, "README.md": readme}
    (found,) = findings(tmp_path, capsys, files)
    assert found["code"] == "DDP040" and not found["unproven"]

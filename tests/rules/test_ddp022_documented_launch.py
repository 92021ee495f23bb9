"""DDP022 where the project's own commands start the script with torch.distributed.launch:
the option has a value under that launch, so the torchrun harm is unproven, and the message
says which torch passes which spelling."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ddplint.cli import main

TRAIN = """\
import argparse
import torch
import torch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument({flags}, type=int, default=0)
args = parser.parse_args()
torch.cuda.set_device(args.local_rank)
dist.init_process_group("nccl")
"""


def findings(tmp_path: Path, capsys, command: str, flags: str) -> list[dict]:
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    (tmp_path / "run.sh").write_text(f"{command} train.py --epochs 3\n", encoding="utf-8")
    (tmp_path / "train.py").write_text(TRAIN.format(flags=flags), encoding="utf-8")
    args = ["check", "--no-cache", "--exit-zero", "--output-format", "json", "--preview"]
    main([*args, "--select", "DDP022", str(tmp_path)])
    return json.loads(capsys.readouterr().out)


LAUNCH = "python -m torch.distributed.launch --nproc_per_node=2"


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        ('"--local_rank"', "passes `--local_rank=N` before torch 2.0 (`--local-rank=N` from"),
        ('"--local-rank"', "passes `--local-rank=N` from torch 2.0 on (`--local_rank=N` before"),
        ('"--local_rank", "--local-rank"', "passes `--local_rank=N` (`--local-rank=N` from"),
    ],
)
def test_a_documented_option_launch_makes_the_torchrun_harm_unproven(tmp_path, capsys, flags, said):
    (found,) = findings(tmp_path, capsys, LAUNCH, flags)
    assert found["unproven"]
    assert found["message"].startswith("`run.sh` starts this script with the deprecated")
    assert said in found["message"]


@pytest.mark.parametrize("command", ["torchrun --nproc_per_node=2", f"{LAUNCH} --use_env"])
def test_a_launch_passing_no_option_leaves_the_finding_proven(tmp_path, capsys, command):
    (found,) = findings(tmp_path, capsys, command, '"--local_rank"')
    assert not found["unproven"]
    assert found["message"].startswith("`--local_rank` is only passed by the deprecated")


OPTIONS = """\
import torch
import torch.distributed as dist


def add_args(parser):
    parser.add_argument("--local_rank", type=int, default=-1)
    return parser


def set_dist(args):
    if args.local_rank != -1:
        torch.cuda.set_device(args.local_rank)
        dist.init_process_group("nccl")
"""


def test_an_options_module_of_a_documented_launch_names_the_script(tmp_path, capsys):
    """`configs.py` declares the option and reads it; `train.py`, which imports it, is
    the script the project starts with torch.distributed.launch. Checked alone (before
    the project is known), the module still finds its importer through the text."""
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    (tmp_path / "run.sh").write_text(f"{LAUNCH} train.py --epochs 3\n", encoding="utf-8")
    (tmp_path / "configs.py").write_text(OPTIONS, encoding="utf-8")
    (tmp_path / "train.py").write_text(
        "import argparse\nfrom configs import add_args, set_dist\n\n"
        "args = add_args(argparse.ArgumentParser()).parse_args()\nset_dist(args)\n",
        encoding="utf-8",
    )
    args = ["check", "--no-cache", "--exit-zero", "--output-format", "json", "--preview"]
    main([*args, "--select", "DDP022", str(tmp_path / "configs.py")])
    (found,) = json.loads(capsys.readouterr().out)
    assert found["unproven"]
    assert found["message"].startswith("`run.sh` starts `train.py`, which imports this module,")

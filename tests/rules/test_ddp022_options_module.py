"""DDP022 on an options module: reported where a script importing it takes the local rank
from the parsed option alone."""

from __future__ import annotations

import json
from pathlib import Path

from ddplint.cli import main

OPTIONS = """\
import argparse


def get_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=0)
    return parser.parse_args()
"""
TRAIN = """\
import torch
import torch.distributed as dist
from options import get_args
{extra}

def main():
    args = get_args()
    {setup}
    torch.cuda.set_device(args.local_rank)
    dist.init_process_group("nccl")


if __name__ == "__main__":
    main()
"""
SETUP = """\
import os


def init(params):
    params.local_rank = int(os.environ["SLURM_LOCALID"])
"""


def findings(tmp_path: Path, capsys, files: dict[str, str]) -> list[dict]:
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    args = ["check", "--no-cache", "--exit-zero", "--output-format", "json", "--preview"]
    main([*args, "--select", "DDP022", str(tmp_path)])
    return json.loads(capsys.readouterr().out)


def test_the_option_of_an_options_module_read_by_a_script(tmp_path, capsys):
    train = TRAIN.format(extra="", setup="pass")
    (found,) = findings(tmp_path, capsys, {"options.py": OPTIONS, "train.py": train})
    assert found["filename"].endswith("options.py") and not found["unproven"]
    assert "`train.py` reads it as the local rank" in found["message"]


def test_a_script_whose_imports_set_the_attribute_is_clean(tmp_path, capsys):
    train = TRAIN.format(extra="import setup_dist", setup="setup_dist.init(args)")
    files = {"options.py": OPTIONS, "train.py": train, "setup_dist.py": SETUP}
    assert findings(tmp_path, capsys, files) == []

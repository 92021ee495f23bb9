"""DDP040: a parser that rejects what the project's own launch command passes makes every
process exit at start; the command decides (`--use_env`, torchrun, a DeepSpeed launch)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ddplint.cli import main

TRAIN = """\
import argparse
import os
import torch
import torch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=1)
{option}
args = parser.{parse}()
local_rank = int(os.environ.get("LOCAL_RANK", 0))
torch.cuda.set_device(local_rank)
dist.init_process_group("nccl")
"""
UNDERSCORE = 'parser.add_argument("--local_rank", type=int, default=0)'


def findings(tmp_path: Path, capsys, files: dict[str, str], preview: bool = False) -> list[dict]:
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    extra = ["--preview"] if preview else []
    args = ["check", "--no-cache", "--exit-zero", "--output-format", "json", *extra]
    main([*args, "--select", "DDP040", str(tmp_path)])
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize(
    ("option", "message"),
    [(UNDERSCORE, "knows only `--local_rank`"), ("", "declares neither")],
    ids=["underscore only", "no option"],
)
def test_old_launcher_in_a_shell_script_is_an_error(tmp_path, capsys, option, message):
    train = TRAIN.format(option=option, parse="parse_args")
    run = "python -m torch.distributed.launch --nproc_per_node=2 train.py --epochs 3\n"
    files = {"train.py": train, "run.sh": run, "requirements.txt": "torch\n"}
    (found,) = findings(tmp_path, capsys, files)
    assert found["code"] == "DDP040" and "`run.sh` starts this script" in found["message"]
    assert message in found["message"] and not found["unproven"]


@pytest.mark.parametrize(
    ("run", "parse"),
    [
        (
            "python -m torch.distributed.launch --use_env --nproc_per_node=2 train.py\n",
            "parse_args",
        ),
        ("torchrun --nproc_per_node=2 train.py\n", "parse_args"),
        ("python -m torch.distributed.launch --nproc_per_node=2 train.py\n", "parse_known_args"),
    ],
    ids=["use_env", "torchrun", "lenient parse"],
)
def test_launches_the_parser_accepts_are_clean(tmp_path, capsys, run, parse):
    train = TRAIN.format(option=UNDERSCORE, parse=parse)
    assert findings(tmp_path, capsys, {"train.py": train, "run.sh": run}) == []


def test_required_option_is_unproven_where_the_project_passes_it_itself(tmp_path, capsys):
    train = TRAIN.format(
        option='parser.add_argument("--local_rank", type=int, required=True)', parse="parse_args"
    )
    run = "for i in 0 1; do\n  python train.py --local_rank=$i &\ndone\nwait\n"
    files = {"train.py": train, "run.sh": run}
    assert findings(tmp_path, capsys, files) == []
    (found,) = findings(tmp_path, capsys, files, preview=True)
    assert found["unproven"] and "is required" in found["message"]


OPTION_ONLY = """\
import argparse
import torch
import torch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
args = parser.parse_args()
if args.local_rank != -1:
    torch.cuda.set_device(args.local_rank)
    dist.init_process_group("nccl")
"""


def test_torchrun_leaves_an_option_only_rank_at_its_default(tmp_path, capsys):
    run = "torchrun --nproc_per_node=4 train.py\n"
    (found,) = findings(tmp_path, capsys, {"train.py": OPTION_ONLY, "run.sh": run})
    assert "`run.sh` starts this script with torchrun" in found["message"]
    assert "keeps its default (-1) in every process" in found["message"]


def test_torchrun_with_a_rank_from_the_environment_is_clean(tmp_path, capsys):
    train = OPTION_ONLY.replace("default=-1", 'default=int(os.environ.get("LOCAL_RANK", -1))')
    train = "import os\n" + train
    run = "torchrun --nproc_per_node=4 train.py\n"
    assert findings(tmp_path, capsys, {"train.py": train, "run.sh": run}) == []


def test_a_readme_command_laid_out_over_lines_names_its_script(tmp_path, capsys):
    readme = (
        "## Train\n```sh\npython -m torch.distributed.launch --nproc_per_node=4\n"
        "  train.py --epochs 3\n```\n"
    )
    train = TRAIN.format(option=UNDERSCORE, parse="parse_args")
    files = {"train.py": train, "README.md": readme, "requirements.txt": "torch\n"}
    (found,) = findings(tmp_path, capsys, files)
    assert "`README.md` starts this script" in found["message"]


def test_an_option_declared_for_old_torch_only_is_left_alone(tmp_path, capsys):
    option = (
        "if int(torch.__version__.split('.')[0]) == 1:\n"
        '    parser.add_argument("--local_rank", type=int, required=True)'
    )
    train = TRAIN.format(option=option, parse="parse_args")
    run = "python -m torch.distributed.launch --nproc_per_node=2 train.py\n"
    assert findings(tmp_path, capsys, {"train.py": train, "run.sh": run}) == []


def test_a_readme_launch_line_naming_no_script_does_not_borrow_the_next_command(tmp_path, capsys):
    readme = "```sh\npython -m torch.distributed.launch --help\npython train.py --epochs 3\n```\n"
    train = TRAIN.format(option=UNDERSCORE, parse="parse_args")
    assert findings(tmp_path, capsys, {"train.py": train, "README.md": readme}) == []


def test_an_inline_readme_command_with_option_lines_names_its_script(tmp_path, capsys):
    readme = (
        "- Train: `python3 -m torch.distributed.launch \n  --nnodes=$HOST_NUM \n"
        "  --nproc_per_node $HOST_GPU_NUM \n  --master_port 8081 \n"
        "  train.py --epochs 3`\n"
    )
    train = TRAIN.format(option=UNDERSCORE, parse="parse_args")
    files = {"train.py": train, "README.md": readme, "requirements.txt": "torch\n"}
    (found,) = findings(tmp_path, capsys, files)
    assert "`README.md` starts this script" in found["message"]


def test_a_usage_synopsis_offering_use_env_does_not_choose_it(tmp_path, capsys):
    readme = "## Launch\n```sh\n$ python -m torch.distributed.launch [--use_env] train.py\n```\n"
    offered, chosen = tmp_path / "offered", tmp_path / "chosen"
    offered.mkdir()
    chosen.mkdir()
    files = {"train.py": OPTION_ONLY, "README.md": readme}
    assert not any("with torchrun" in f["message"] for f in findings(offered, capsys, files))
    files["README.md"] = readme.replace("[--use_env]", "--use_env")
    (found,) = findings(chosen, capsys, files)
    assert "keeps its default (-1) in every process" in found["message"]

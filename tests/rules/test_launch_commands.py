"""How a project launches its scripts (`ddplint.domain.launch_commands`): a script whose
distributed mode hangs on a `--local_rank` that keeps -1, and that every command of its
project runs as one plain process, has its findings reported as unproven; any launcher,
rank or doubt keeps them proven."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from ddplint.cli import main

TRAIN = """\
import argparse
import torch
import torch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default={default})
args = parser.parse_args()
if args.local_rank != -1:
    dist.init_process_group("nccl")


def step(model, x):
    loss = model(x).sum() / dist.get_world_size()
    loss.backward()
"""


def run(capsys: pytest.CaptureFixture[str], root: Path) -> str:
    main(["check", "--no-cache", "--select", "DDP005", str(root / "train.py")])
    return capsys.readouterr().out


def project(tmp_path: Path, files: dict[str, str]) -> Path:
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(textwrap.dedent(text), encoding="utf-8")
    return tmp_path


ONE_PROCESS = {
    "shell script beside the root": {"run.sh": "python train.py --lr 0.1\n"},
    "shell script in scripts/": {
        "scripts/run.sh": "CUDA_VISIBLE_DEVICES=0 python -u train.py \\\n  --lr 0.1\n"
    },
    "path under a variable": {"run.sh": "python $ROOT/train.py\n"},
    "README": {"README.md": "Train with\n\n```\npython train.py --epochs 3\n```\n"},
}


@pytest.mark.parametrize("commands", ONE_PROCESS.values(), ids=ONE_PROCESS.keys())
def test_script_launched_only_as_one_process_is_unproven(tmp_path, capsys, commands):
    root = project(tmp_path, {"train.py": TRAIN.format(default=-1), **commands})
    assert "1 more unproven finding hidden" in run(capsys, root)


def test_local_rank_defined_in_an_options_module(tmp_path, capsys):
    options = 'def add(parser):\n    parser.add_argument("--local_rank", type=int, default=-1)\n'
    train = TRAIN.format(default=-1).replace(
        'parser.add_argument("--local_rank", type=int, default=-1)', "options.add(parser)"
    )
    root = project(
        tmp_path,
        {
            "options.py": options,
            "train.py": "import options\n" + train,
            "run.sh": "python train.py\n",
        },
    )
    assert "1 more unproven finding hidden" in run(capsys, root)


def test_commands_passing_minus_one_make_any_default_one_process(tmp_path, capsys):
    root = project(
        tmp_path,
        {"train.py": TRAIN.format(default=0), "run.sh": "python train.py --local_rank -1\n"},
    )
    assert "1 more unproven finding hidden" in run(capsys, root)


PROVEN = {
    "no command": ({}, -1),
    "torchrun": ({"run.sh": "torchrun --nproc_per_node=8 train.py\n"}, -1),
    "old launcher": (
        {"run.sh": "python -m torch.distributed.launch --nproc_per_node 4 train.py\n"},
        -1,
    ),
    "one of two commands launches": (
        {"run.sh": "python train.py\n", "README.md": "    torchrun --nproc_per_node 2 train.py\n"},
        -1,
    ),
    "a rank passed": ({"run.sh": "python train.py --local_rank 0\n"}, -1),
    "default not -1": ({"run.sh": "python train.py\n"}, 0),
    "a launcher runs a script named by a variable": (
        {"run.sh": "python train.py\n", "multi.sh": "torchrun --nproc_per_node 2 $SCRIPT\n"},
        -1,
    ),
    "a launcher in scripts/ runs ../train.py": (
        {
            "run.sh": "python train.py\n",
            "scripts/multi.sh": "torchrun --nproc_per_node 2 ../train.py\n",
        },
        -1,
    ),
    "a launcher runs a module": (
        {"run.sh": "python train.py\n", "multi.sh": "torchrun --nproc_per_node 2 -m train\n"},
        -1,
    ),
}


@pytest.mark.parametrize(("commands", "default"), PROVEN.values(), ids=PROVEN.keys())
def test_any_launcher_or_doubt_keeps_the_finding_proven(tmp_path, capsys, commands, default):
    root = project(tmp_path, {"train.py": TRAIN.format(default=default), **commands})
    out = run(capsys, root)
    assert "DDP005" in out and "unproven" not in out


def test_a_script_that_starts_its_own_processes_is_not_one_process(tmp_path, capsys):
    train = (
        TRAIN.format(default=-1)
        + "\n\nimport torch.multiprocessing as mp\nmp.spawn(step, nprocs=2)\n"
    )
    root = project(tmp_path, {"train.py": train, "run.sh": "python train.py\n"})
    out = run(capsys, root)
    assert "DDP005" in out and "unproven" not in out


DDP022_TRAIN = """\
import argparse
import torch
import torch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=0)
args = parser.parse_args()
torch.cuda.set_device(args.local_rank)
dist.init_process_group("nccl")
"""

OWN_LAUNCHER = """\
import subprocess
import sys

procs = []
for local_rank in range(int(sys.argv[1])):
    cmd = [sys.executable, "train.py", "--local_rank={}".format(local_rank)]
    procs.append(subprocess.Popen(cmd))
"""


@pytest.mark.parametrize(
    "launch",
    [
        {"launch.py": OWN_LAUNCHER},
        {"run.sh": "for i in 0 1 2 3; do\n  python train.py --local_rank=$i &\ndone\nwait\n"},
    ],
    ids=["launcher module", "shell loop"],
)
def test_local_rank_the_project_passes_itself_is_unproven_for_ddp022(tmp_path, capsys, launch):
    """The project starts each worker with its own `--local_rank`: torchrun, under which the
    argument would keep its default, is a launch it does not use."""
    root = project(tmp_path, {"train.py": DDP022_TRAIN, **launch})
    main(["check", "--no-cache", "--select", "DDP022", str(root / "train.py")])
    out = capsys.readouterr().out
    assert "1 more unproven finding hidden" in out
    main(["check", "--no-cache", "--select", "DDP022", str(root)])
    assert "1 more unproven finding hidden" in capsys.readouterr().out


def test_local_rank_only_the_old_launcher_passes_is_reported(tmp_path, capsys):
    root = project(tmp_path, {"train.py": DDP022_TRAIN, "run.sh": "python train.py\n"})
    main(["check", "--no-cache", "--select", "DDP022", str(root / "train.py")])
    out = capsys.readouterr().out
    assert "DDP022" in out and "unproven" not in out


SELF_LAUNCHER = """\
import argparse
import torch
import torch.distributed as dist
from torch.multiprocessing import Process


def worker(rank, size, args):
    torch.cuda.set_device(args.local_rank)
    dist.init_process_group("nccl", rank=rank, world_size=size)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=0)
    args = parser.parse_args()
    processes = []
    for rank in range(4):
        {assignment}
        p = Process(target=worker, args=(rank, 4, args))
        p.start()
        processes.append(p)
"""


@pytest.mark.parametrize(
    ("assignment", "reported"), [("args.local_rank = rank", False), ("pass", True)]
)
def test_a_script_that_sets_local_rank_for_each_worker_it_starts(
    tmp_path, capsys, assignment, reported
):
    """The script is its own launcher: each worker gets the value its loop set."""
    root = project(tmp_path, {"train.py": SELF_LAUNCHER.format(assignment=assignment)})
    main(["check", "--no-cache", "--select", "DDP022", "--preview", str(root / "train.py")])
    assert ("DDP022" in capsys.readouterr().out) is reported


# A task folder whose README runs the script in its `code/` folder, as benchmark suites
# with one folder per task lay out their commands ("navigate to `code`", `cd code`).
TASK_README = "## Fine-tune\n\n```shell\ncd code\n{command} \\\n    --do_train\n```\n"


def test_readme_of_a_task_folder_runs_the_script_below_it(tmp_path, capsys):
    root = project(
        tmp_path,
        {
            "task/code/train.py": TRAIN.format(default=-1),
            "task/README.md": TASK_README.format(command="python train.py"),
        },
    )
    main(["check", "--no-cache", "--preview", "--select", "DDP005", str(root)])
    out = capsys.readouterr().out
    assert "[preview]" in out
    assert "every command of the project that runs this script (`task/README.md`)" in out
    assert "starts one plain process, with no distributed launcher" in out


@pytest.mark.parametrize(
    "files",
    [
        {"task/README.md": TASK_README.format(command="torchrun --nproc_per_node=$GPUS train.py")},
        {
            "task/README.md": TASK_README.format(command="python train.py"),
            "task/multi_gpu.md": "```\npython -m torch.distributed.launch --nproc_per_node 8 "
            "train.py\n```\n",
        },
        # no `cd`: `train.py` names either file, which one runs as one process is not known
        {
            "task/README.md": "Navigate to `code`, then run `python train.py`.\n",
            "task/other/train.py": "print('another script')\n",
        },
    ],
    ids=["launcher", "one distributed launch among plain runs", "several files of that name"],
)
def test_a_distributed_launch_or_doubt_below_a_task_folder_keeps_it_proven(tmp_path, capsys, files):
    root = project(tmp_path, {"task/code/train.py": TRAIN.format(default=-1), **files})
    main(["check", "--no-cache", "--select", "DDP005", str(root / "task" / "code" / "train.py")])
    out = capsys.readouterr().out
    assert "DDP005" in out and "unproven" not in out


def test_ddp022_where_the_project_pins_a_torch_without_torchrun(tmp_path, capsys):
    """torch 1.4 has no torchrun: the advice needs a torch the project does not install."""
    root = project(
        tmp_path,
        {"train.py": DDP022_TRAIN, "README.md": "```\npip install torch==1.4.0\n```\n"},
    )
    main(["check", "--no-cache", "--preview", "--select", "DDP022", str(root / "train.py")])
    out = capsys.readouterr().out
    assert "[preview]" in out and "pins torch 1.4, older than 1.10" in out


def test_cd_in_a_readme_block_decides_which_script_a_bare_name_runs(tmp_path, capsys):
    """`cd pretrain` then a launcher, `cd infer` then a plain run: the inference script's
    distributed mode is never launched, the pre-training script's is."""
    readme = (
        "```bash\ncd pretrain\ntorchrun --nproc_per_node=8 run.py --epochs 3\n```\n\n"
        "```bash\ncd infer\npython run.py --split test\n```\n"
    )
    root = project(
        tmp_path,
        {
            "pretrain/run.py": TRAIN.format(default=-1),
            "infer/run.py": TRAIN.format(default=-1),
            "README.md": readme,
        },
    )
    main(["check", "--no-cache", "--preview", "--select", "DDP005", str(root)])
    out = capsys.readouterr().out
    infer = next(line for line in out.splitlines() if "infer" in line)
    pretrain = next(line for line in out.splitlines() if "pretrain" in line)
    assert "[preview]" in infer and "(`README.md`)" in infer
    assert "[preview]" not in pretrain


# A script with no `--local_rank` option whose distributed mode a launcher turns on: the
# process group starts only where the launcher's environment (or an option) says so.
OPT_IN = """\
import argparse
import os
import torch
import torch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument("--distributed", action="store_true")
args = parser.parse_args()
if {test}:
    dist.init_process_group("nccl")


def step(model, x):
    loss = model(x).sum() / dist.get_world_size()
    loss.backward()
"""


@pytest.mark.parametrize(
    ("test", "command", "unproven"),
    [
        ('"WORLD_SIZE" in os.environ', "python train.py", True),
        ('int(os.environ.get("WORLD_SIZE", 1)) > 1', "python train.py --lr 3e-4", True),
        ("args.distributed", "python train.py", True),
        ("args.distributed", "python train.py --distributed", False),
        ('"WORLD_SIZE" in os.environ', "torchrun --nproc_per_node 4 train.py", False),
        ("True", "python train.py", False),
    ],
    ids=[
        "launcher variable",
        "world size from the environment",
        "flag left off",
        "flag passed",
        "torchrun",
        "always distributed",
    ],
)
def test_a_distributed_mode_opt_in_by_environment_or_flag(
    tmp_path, capsys, test, command, unproven
):
    root = project(tmp_path, {"train.py": OPT_IN.format(test=test), "run.sh": command + "\n"})
    out = run(capsys, root)
    assert ("1 more unproven finding hidden" in out) is unproven
    assert ("DDP005" in out) is not unproven


@pytest.mark.parametrize(
    "spelling",
    ['$(dirname "$0")', "$(dirname $0)", "`dirname $0`", '$(dirname "${BASH_SOURCE[0]}")'],
)
def test_a_command_file_naming_its_own_folder_runs_the_script_beside_it(tmp_path, capsys, spelling):
    """`tools/dist_train.sh` runs `$(dirname "$0")/train.py`: the `train.py` in `tools/`,
    not the one at the root, whichever folder the script is started from."""
    launch = (
        "python -m torch.distributed.launch --nproc_per_node=$GPUS \\\n"
        f"    {spelling}/train.py $CONFIG\n"
    )
    root = project(
        tmp_path,
        {
            "train.py": "print('not this one')\n",
            "tools/train.py": DDP022_TRAIN,
            "tools/dist_train.sh": launch,
            "requirements.txt": "torch\n",
        },
    )
    main(["check", "--no-cache", "--select", "DDP040", str(root / "tools" / "train.py")])
    out = capsys.readouterr().out
    assert "DDP040 `tools/dist_train.sh` starts this script with torch.distributed.launch" in out

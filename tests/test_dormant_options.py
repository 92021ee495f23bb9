"""Branches a script takes only under an option none of its project's commands passes:
findings there are unproven (`ddplint.domain.dormant_options`)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from ddplint.checker import check_file
from ddplint.project.queries import Project

SCRIPT = """\
import argparse
import random
import torch
import torch.multiprocessing as mp
import torch.distributed as dist

def worker(gpu, args):
    dist.init_process_group("nccl", init_method="tcp://127.0.0.1:1", rank=gpu, world_size=2)

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument({flags}, {declaration})
    parser.add_argument("--lr", type=float, default=0.1)
    args = parser.parse_args()
    if {test}:
        random.seed(1)
    mp.spawn(worker, nprocs=2, args=(args,))

if __name__ == "__main__":
    main()
"""


def unproven(tmp_path: Path, command: str | None, **script: str) -> list[bool]:
    """Whether each DDP041 finding of the script is unproven, with `command` (if any) in
    the project's `run.sh`."""
    values = {"flags": '"--seed"', "declaration": "type=int", "test": "args.seed is not None"}
    values.update(script)
    (tmp_path / "pyproject.toml").write_text("")
    source = SCRIPT
    for key, value in values.items():
        source = source.replace("{" + key + "}", value)
    target = tmp_path / "train.py"
    target.write_text(textwrap.dedent(source))
    if command is not None:
        (tmp_path / "run.sh").write_text(f"#!/bin/bash\n{command}\n")
    project = Project.load([str(target)])
    result = check_file(str(target), target.read_bytes(), ["DDP041"], project)
    assert not result.internal_errors
    return [d.unproven for d in result.diagnostics]


def test_an_option_no_command_passes_makes_its_branch_unproven(tmp_path: Path) -> None:
    assert unproven(tmp_path, "python train.py --lr 0.2") == [True]


@pytest.mark.parametrize(
    "command",
    [
        "python train.py --lr 0.2 --seed 3",
        "python train.py --seed=3",
        "python train.py --se 3",  # argparse takes a unique prefix
        'python train.py --lr 0.2 "$@"',  # options forwarded from the caller
        None,  # no command starts the script: unknown
    ],
)
def test_a_passed_or_possibly_passed_option_keeps_the_finding(
    tmp_path: Path, command: str | None
) -> None:
    assert unproven(tmp_path, command) == [False]


def test_defaults_and_actions_decide_whether_the_branch_is_off(tmp_path: Path) -> None:
    command = "python train.py --lr 0.2"
    assert unproven(tmp_path, command, declaration="type=int, default=0") == [False]
    assert unproven(tmp_path, command, declaration='action="store_true"', test="args.seed") == [
        True
    ]
    store_true_not_none = unproven(tmp_path, command, declaration='action="store_true"')
    assert store_true_not_none == [False]  # False is not None: the branch runs


def test_a_short_flag_is_not_read_from_commands(tmp_path: Path) -> None:
    assert unproven(tmp_path, "python train.py -s 3", flags='"-s", "--seed"') == [False]


OPTIONS = """\
import argparse


def get_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--lr", type=float, default=0.1)
    return parser.parse_args()
"""
SPAWNING = """\
import random
import torch.multiprocessing as mp
import torch.distributed as dist
from options import get_args

def worker(gpu, args):
    dist.init_process_group("nccl", init_method="tcp://127.0.0.1:1", rank=gpu, world_size=2)

def main():
    args = get_args()
    if args.seed is not None:
        random.seed(args.seed)
    mp.spawn(worker, nprocs=2, args=(args,))

if __name__ == "__main__":
    main()
"""


def _options_module_unproven(tmp_path: Path, command: str, **edits: str) -> list[bool]:
    (tmp_path / "pyproject.toml").write_text("")
    options = OPTIONS
    for old, new in edits.items():
        options = options.replace(old, new)
    (tmp_path / "options.py").write_text(options)
    (tmp_path / "run.sh").write_text(f"#!/bin/bash\n{command}\n")
    target = tmp_path / "train.py"
    target.write_text(SPAWNING)
    project = Project.load([str(target)])
    result = check_file(str(target), target.read_bytes(), ["DDP041"], project)
    assert not result.internal_errors
    return [d.unproven for d in result.diagnostics]


def test_an_option_declared_in_an_options_module_is_read_there(tmp_path: Path) -> None:
    # ReSA: `random_seed(args)` seeds only under `--seed`, declared in args.py
    assert _options_module_unproven(tmp_path, "python train.py --lr 0.2") == [True]


def test_an_options_module_option_a_command_passes_keeps_the_finding(tmp_path: Path) -> None:
    assert _options_module_unproven(tmp_path, "python train.py --seed 1") == [False]


def test_an_option_set_otherwise_or_declared_twice_is_not_dormant(tmp_path: Path) -> None:
    lr = 'parser.add_argument("--lr", type=float, default=0.1)'
    twice = lr + '\n    parser.add_argument("--seed", type=int)'
    assert _options_module_unproven(
        tmp_path,
        "python train.py",
        **{lr: twice},
    ) == [False]
    set_here = "    return parser.parse_args()"
    assert _options_module_unproven(
        tmp_path, "python train.py", **{set_here: "    parser.set_defaults(seed=3)\n" + set_here}
    ) == [False]

"""Branches a script takes only under an option none of its project's commands passes:
findings there are unproven (`ddplint.domain.dormant_options`)."""

from __future__ import annotations

import sys
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


SETTINGS_SCRIPT = """\
import random

import torch.distributed as dist
import torch.multiprocessing as mp

from configs.base import config as cfg


def worker(gpu):
    dist.init_process_group("nccl", init_method="tcp://127.0.0.1:1", rank=gpu, world_size=2)


def main():
    if cfg.fixed_seed:
        random.seed(1)
    mp.spawn(worker, nprocs=2)


if __name__ == "__main__":
    main()
"""


def setting_unproven(tmp_path: Path, files: dict[str, str]) -> list[bool]:
    """Whether each DDP041 finding of a script seeding under `cfg.fixed_seed` is unproven,
    with the project's other files `files`."""
    (tmp_path / "pyproject.toml").write_text("")
    target = tmp_path / "train.py"
    target.write_text(SETTINGS_SCRIPT)
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "__init__.py").write_text("")
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    project = Project.load([str(target)])
    result = check_file(str(target), target.read_bytes(), ["DDP041"], project)
    assert not result.internal_errors
    return [d.unproven for d in result.diagnostics]


BASE = "from easydict import EasyDict\n\nconfig = EasyDict()\nconfig.fixed_seed = False\n"


def test_a_setting_every_config_leaves_off_makes_its_branch_unproven(tmp_path: Path) -> None:
    other = "from .base import config\n\nconfig.fixed_seed = None\nconfig.lr = 0.1\n"
    log = 'print("fixed_seed is off")  # a word in prose sets nothing\n'
    files = {"configs/base.py": BASE, "configs/ms1m.py": other, "run.sh": "python train.py\n"}
    files["log.py"] = log
    assert setting_unproven(tmp_path, files) == [True]


@pytest.mark.parametrize(
    "files",
    [
        {"configs/ms1m.py": "from .base import config\n\nconfig.fixed_seed = True\n"},
        {"configs/glint.yaml": "fixed_seed: true\nlr: 0.1\n"},
        {"run.sh": "python train.py --opts fixed_seed True\n"},
        {
            "options.py": "import argparse\n\n"
            'argparse.ArgumentParser().add_argument("--fixed_seed")\n'
        },
        {"configs/ms1m.py": "from .base import config\n\nconfig.fixed_seed = seed_from_env()\n"},
        {"tools.py": 'def turn_on(cfg):\n    cfg.merge_from_list(["fixed_seed", True])\n'},
        {"tools.py": 'def turn_on(cfg):\n    cfg.merge_from_list(["config.fixed_seed", True])\n'},
        {"tools.py": "def one_gpu(cfg):\n    if cfg.gpus == 1:\n        cfg.fixed_seed = False\n"},
    ],
    ids=[
        "a config turns it on",
        "a settings file does",
        "a command names it",
        "a flag",
        "a value",
        "a key",
        "a dotted key",
        "set by code",
    ],
)
def test_a_setting_given_any_other_value_or_named_elsewhere_keeps_the_finding(
    tmp_path: Path, files: dict[str, str]
) -> None:
    assert setting_unproven(tmp_path, {"configs/base.py": BASE, **files}) == [False]


def test_a_setting_no_file_gives_a_value_is_not_known_to_be_off(tmp_path: Path) -> None:
    assert setting_unproven(tmp_path, {"configs/base.py": "config = {}\n"}) == [False]


@pytest.mark.parametrize(
    ("value", "expected"), [("'origin'", [True]), ("'dist'", [False]), ("mode()", [False])]
)
def test_a_mode_setting_no_config_gives_the_tested_value(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str, expected: list[bool]
) -> None:
    script = SETTINGS_SCRIPT.replace("if cfg.fixed_seed:", 'if cfg.train_method == "dist":')
    monkeypatch.setattr(sys.modules[__name__], "SETTINGS_SCRIPT", script)
    base = "from types import SimpleNamespace\n\nconfig = SimpleNamespace()\n"
    base += f"config.train_method = {value}\n"
    assert setting_unproven(tmp_path, {"configs/base.py": base}) == expected

"""Rank flags: an attribute one module sets to a rank test (`args.reporter = RANK == 0`)
and another tests (`if args.reporter:`), where the object arrives as a parameter."""

from __future__ import annotations

import pytest

from ddplint.domain.rank_flags import assigned_values, may_be_rank_test, set_by_name

LAUNCH = """\
import os

import torch.distributed as dist

from loop import fit


def main(args, model, loader):
    if args.ddp:
        dist.init_process_group("nccl")
        args.reporter = int(os.environ["RANK"]) == 0
    else:
        args.reporter = True
    fit(model, loader, args)
"""

LOOP = """\
import torch
import torch.distributed as dist


def fit(model, loader, args):
    total = torch.zeros(1)
    for x in loader:
        total += model(x).sum()
    if args.reporter:
        dist.all_reduce(total)
        torch.save(model.state_dict(), "last.pt")
"""


def findings(cli, path, *options: str) -> list[tuple[str, int]]:
    result = cli(
        "check", "--exit-zero", "--select", "DDP010,DDP013", "--output-format", "json",
        *options, path,
    )  # fmt: skip
    assert result.code == 0, result.err
    return [(d["code"], d["location"]["row"]) for d in result.json()]


@pytest.fixture
def project(write, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write("pyproject.toml", "")
    return write("launch.py", LAUNCH), write("loop.py", LOOP)


def test_a_flag_set_to_a_rank_test_in_another_module_gates(cli, project):
    """The collective under `args.reporter` runs on rank 0 only (a hang, proven: the
    test reads `RANK`); the save under it is rank 0's alone, not every rank's."""
    _, loop = project
    assert findings(cli, loop) == [("DDP010", 10)]


def test_any_other_assignment_makes_the_flag_unknown(cli, write, project):
    """A second entry point setting the flag for every rank: no rank test, so neither a
    hang nor a guarded save (a cached result must follow the new module)."""
    _, loop = project
    assert findings(cli, loop) == [("DDP010", 10)]
    write("finetune.py", "from loop import fit\n\n\ndef main(args):\n    args.reporter = True\n")
    assert findings(cli, loop) == [("DDP013", 11)]


def test_a_flag_that_is_also_an_option_is_unknown(cli, write, project):
    """`--reporter` on the command line sets it alike on every rank before any rank test."""
    launch, loop = project
    launch.write_text('OPTION = "--reporter"\n' + LAUNCH)
    assert findings(cli, loop) == [("DDP013", 11)]


def test_a_flag_from_a_name_only_rank_test_is_unproven(cli, project):
    """`local_rank == 0` with `local_rank` a parameter nothing passes: a rank test by
    its name, too weak to prove a hang (`--preview`)."""
    launch, loop = project
    launch.write_text(
        LAUNCH.replace('int(os.environ["RANK"]) == 0', "local_rank == 0").replace(
            "def main(args,", "def main(local_rank, args,"
        )
    )
    assert findings(cli, loop) == []
    assert findings(cli, loop, "--preview") == [("DDP010", 10)]


@pytest.mark.parametrize(
    ("line", "values"),
    [
        ("args.reporter = rank == 0", [" rank == 0"]),
        ("self.reporter: bool = is_main()", [" is_main()"]),
        ("cfg.reporter, other = f()", [" f()"]),
        ("if args.reporter == 1: pass", []),
        ("if args.reporter != x: pass", []),
        ("x = args.reporter", []),
        ("args.reporters = 1", []),
        ("f(args.reporter, k=1)", ["1)"]),  # a superset: the parse decides
    ],
)
def test_assigning_lines_are_found_by_text(line, values):
    assert assigned_values("reporter", line) == values


@pytest.mark.parametrize(
    ("value", "may"),
    [
        (" int(os.environ['RANK']) == 0", True),
        (" local_rank in [-1, 0]", True),
        (" True", True),
        (" is_master", True),
        (" cfg.log_every", False),
        (" 5", False),
    ],
)
def test_values_that_may_be_rank_tests(value, may):
    assert may_be_rank_test(value) is may


@pytest.mark.parametrize(
    ("text", "sets"),
    [
        ('parser.add_argument("--reporter", action="store_true")', True),
        ('parser.add_argument("-r", dest="reporter")', True),
        ('setattr(args, "reporter", True)', True),
        ('defaults = {"reporter": False}', True),
        ('cfg["reporter"] = False', True),
        ("if str(key) != 'reporter':", False),
        ('print("reporter")', False),
    ],
)
def test_strings_that_may_set_the_attribute(text, sets):
    assert (set_by_name("reporter").search(text) is not None) is sets

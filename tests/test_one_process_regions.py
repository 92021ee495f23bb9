"""Code that runs in one process: branches that literals decide never run
(`ddplint.engine.dead_code`), the off side of a project's own distributed switch
(`ddplint.domain.switches`), and workers spawned as one process."""

from __future__ import annotations

import libcst as cst
import pytest

from ddplint.context import FileContext
from ddplint.domain.one_rank_groups import spawns_one_process
from ddplint.engine.dead_code import exclusive, never_runs


def _context(source: str) -> FileContext:
    return FileContext("train.py", source, cst.parse_module(source))


def _marked(ctx: FileContext) -> cst.CSTNode:
    """The call `mark()` in the source."""
    return next(c for c in ctx.calls if isinstance(c.func, cst.Name) and c.func.value == "mark")


@pytest.mark.parametrize(
    ("body", "dead"),
    [
        ("n = 1\n    if n > 1:\n        mark()", True),
        ("n = 1\n    if n == 1:\n        return\n    mark()", True),
        ("debug = False\n    if debug and n:\n        mark()", True),
        ("n = 2\n    if n > 1:\n        mark()", False),
        ("n = 1\n    if flag:\n        n = 2\n    if n > 1:\n        mark()", False),
        ("n = 1\n    n += 1\n    if n > 1:\n        mark()", False),
        ("if n > 1:\n        mark()", False),  # a parameter: any caller's value
        ("if WORLD > 1:\n        mark()", False),  # a global another function may rebind
    ],
)
def test_branches_literals_decide(body: str, dead: bool) -> None:
    ctx = _context(f"WORLD = 1\n\n\ndef run(n, flag):\n    {body}\n")
    assert never_runs(ctx.flow, ctx.resolver, _marked(ctx)) is dead


@pytest.mark.parametrize(
    ("body", "dead"),
    [
        # `else` of a test the function made mandatory before: one value, both ways.
        (
            "if not args.distributed:\n        raise SystemExit\n    if args.distributed:\n"
            "        pass\n    else:\n        mark()",
            True,
        ),
        (
            "if args.distributed:\n        pass\n    else:\n        raise ValueError\n"
            "    if not args.distributed:\n        mark()",
            True,
        ),
        ("if flag:\n        if not flag:\n            mark()", True),
        ("if flag and n:\n        if not flag:\n            mark()", True),
        # Something between the tests may change the value.
        ("if flag:\n        flag = False\n        if not flag:\n            mark()", False),
        (
            "if not args.distributed:\n        raise SystemExit\n    setup(args)\n"
            "    if not args.distributed:\n        mark()",
            False,
        ),
        (
            "if args.distributed:\n        args.distributed = n > 1\n"
            "        if not args.distributed:\n            mark()",
            False,
        ),
        # Different values, or one test read only once.
        ("if flag:\n        if not n:\n            mark()", False),
        ("if not flag:\n        mark()", False),
    ],
)
def test_tests_that_need_one_value_both_ways(body: str, dead: bool) -> None:
    ctx = _context(f"def run(args, n, flag):\n    {body}\n")
    assert never_runs(ctx.flow, ctx.resolver, _marked(ctx)) is dead


@pytest.mark.parametrize(
    ("first", "second", "apart"),
    [
        ('args.mode == "test"', 'args.mode == "train"', True),
        ('args.mode == "test"', 'args.mode != "test"', True),
        ("flag", "not flag", True),
        ('args.mode != "test"', 'args.mode != "train"', False),  # both hold for "eval"
        ('args.mode != "test"', 'args.mode == "train"', False),
        ("args.mode", 'args.mode == "train"', False),  # a truthy mode may be "train"
        ('args.mode == "test"', 'other.mode == "train"', False),
    ],
)
def test_tests_that_exclude_each_other(first: str, second: str, apart: bool) -> None:
    source = (
        f"def run(args, other, flag):\n    if {first}:\n        mark()\n"
        f"    if {second}:\n        step()\n"
    )
    ctx = _context(source)
    calls = {c.func.value: c for c in ctx.calls if isinstance(c.func, cst.Name)}
    assert exclusive(ctx.flow, ctx.resolver, calls["mark"], calls["step"]) is apart


def test_a_value_changed_between_the_tests_is_not_apart() -> None:
    source = (
        'def run(args):\n    if args.mode == "test":\n        mark()\n'
        '    args.mode = "train"\n    if args.mode == "train":\n        step()\n'
    )
    ctx = _context(source)
    calls = {c.func.value: c for c in ctx.calls if isinstance(c.func, cst.Name)}
    assert not exclusive(ctx.flow, ctx.resolver, calls["mark"], calls["step"])


ASSERTED = """\
class Trainer:
    def __init__(self, config):
        self.distribute = config["n_gpu"] > 1
        assert not self.distribute
        if self.distribute:
            {before}

    def loaders(self):
        {later}
        if self.distribute:
            mark()
"""


@pytest.mark.parametrize(
    ("before", "later", "dead"),
    [
        ("pass", "pass", True),  # asserted off at construction: off in every method
        ("pass", "self.distribute = True", False),  # a method sets it again
        ("self.distribute = True", "pass", False),  # set again after the assertion
    ],
)
def test_an_attribute_the_constructor_asserts(before: str, later: str, dead: bool) -> None:
    ctx = _context(ASSERTED.format(before=before, later=later))
    assert never_runs(ctx.flow, ctx.resolver, _marked(ctx)) is dead


def test_the_constructor_before_its_assertion_is_undecided() -> None:
    source = ASSERTED.format(before="pass", later="pass").replace(
        "        assert not self.distribute\n        if self.distribute:\n            pass\n",
        "        if self.distribute:\n            mark()\n        assert not self.distribute\n",
    )
    ctx = _context(source)
    first = next(c for c in ctx.calls if isinstance(c.func, cst.Name) and c.func.value == "mark")
    assert not never_runs(ctx.flow, ctx.resolver, first)


@pytest.mark.parametrize(
    ("launch", "one"),
    [
        ("mp.spawn(work)", True),
        ("size = 1\n    mp.spawn(work, args=(size,), nprocs=size)", True),
        ("mp.start_processes(work, (), 1)", True),
        ("mp.spawn(work, nprocs=2)", False),
        ("mp.spawn(work, nprocs=count)", False),
        ("mp.spawn(*spec)", False),
    ],
)
def test_spawn_of_one_process(launch: str, one: bool) -> None:
    source = f"import torch.multiprocessing as mp\n\n\ndef main(count, spec):\n    {launch}\n"
    ctx = _context(source)
    call = next(c for c in ctx.calls if "spawn" in ctx.code(c) or "start_" in ctx.code(c))
    assert spawns_one_process(ctx, call) is one


ENTRY = """\
import argparse

import torch
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

from helpers import setup
from loop import train


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--enable_fsdp", action="store_true")
    cfg = parser.parse_args()
    if cfg.enable_fsdp:
        setup()
        model = FSDP(torch.nn.Linear(4, 4))
    else:
        model = torch.nn.Linear(4, 4)
    train(model, cfg)


if __name__ == "__main__":
    main()
"""

HELPERS = """\
import torch.distributed as dist


def setup():
    dist.init_process_group("nccl")
"""

LOOP = """\
import torch
import torch.distributed as dist


def train(model, cfg):
    if cfg.enable_fsdp:
        dist.barrier()
    else:
        model.to("cuda:0")
"""


def _findings(cli, path, code: str) -> list[int]:
    result = cli("check", "--exit-zero", "--select", code, "--output-format", "json", path)
    assert result.code == 0, result.err
    return [d["location"]["row"] for d in result.json()]


def test_switch_set_in_the_module_that_imports_the_loop(cli, write, tmp_path, monkeypatch):
    """`loop.py` reads `cfg.enable_fsdp`; only `main.py`, which imports it, shows that the
    job starts under it. Checked alone, the off side is one process; once `main.py` starts
    the job on every run (through its helper), `cuda:0` is every rank's again, and a
    cached result follows both changes."""
    monkeypatch.chdir(tmp_path)
    write("pyproject.toml", "")
    write("helpers.py", HELPERS)
    entry = write("main.py", ENTRY)
    loop = write("loop.py", LOOP)
    assert _findings(cli, loop, "DDP001") == []
    gated = "    if cfg.enable_fsdp:\n        setup()\n        model"
    entry.write_text(ENTRY.replace(gated, "    setup()\n    if cfg.enable_fsdp:\n        model"))
    assert _findings(cli, loop, "DDP001") == [9]  # the wrap alone under the flag: no switch
    entry.write_text(ENTRY)
    assert _findings(cli, loop, "DDP001") == []


def test_a_flag_that_starts_jobs_both_ways_is_no_switch(cli, write, tmp_path, monkeypatch):
    """Another module starts a job where `enable_fsdp` is false: the flag is no switch."""
    monkeypatch.chdir(tmp_path)
    write("pyproject.toml", "")
    write("helpers.py", HELPERS)
    write("main.py", ENTRY)
    write(
        "other.py",
        "import torch.distributed as dist\n\n\ndef start(cfg):\n"
        "    if not cfg.enable_fsdp:\n        dist.init_process_group('gloo')\n",
    )
    loop = write("loop.py", LOOP)
    assert _findings(cli, loop, "DDP001") == [9]


def test_a_module_wrapping_both_ways_makes_no_switch(cli, write, tmp_path, monkeypatch):
    """`main.py` wraps in FSDP where `enable_fsdp` holds and in DDP where it does not: the
    other side is a job too, so the flag is no switch, whatever another module starts
    under it."""
    monkeypatch.chdir(tmp_path)
    write("pyproject.toml", "")
    write("helpers.py", HELPERS)
    write(
        "other.py",
        "import torch.distributed as dist\n\n\ndef start(cfg):\n"
        "    if cfg.enable_fsdp:\n        dist.init_process_group('gloo')\n",
    )
    write(
        "main.py",
        ENTRY.replace(
            "        model = torch.nn.Linear(4, 4)\n",
            "        model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(4, 4))\n",
        ),
    )
    loop = write("loop.py", LOOP)
    assert _findings(cli, loop, "DDP001") == [9]

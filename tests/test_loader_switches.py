"""A helper that builds its loader's DistributedSampler only under a test of one of its
parameters (`if not dist: ... else: DistributedSampler(...)`) returns no such loader to a
caller that leaves the parameter off: the project's answer to "does this call return a
loader on a shuffling DistributedSampler" follows the argument."""

from __future__ import annotations

import libcst as cst
import pytest

from ddplint.context import FileContext
from ddplint.domain.samplers import LoaderSwitch, loader_switches, switch_truth, switched_on, truth
from ddplint.domain.shard_metrics import shard_switches

HELPER = """\
from torch.utils.data import DataLoader, DistributedSampler


def build(dataset, batch_size, dist=False):
    sampler = None
    if not dist:
        loader = DataLoader(dataset, batch_size=batch_size, shuffle=True)
    else:
        sampler = DistributedSampler(dataset, shuffle=True)
        loader = DataLoader(dataset, batch_size=batch_size, sampler=sampler)
    return loader, sampler


def always(dataset):
    return DataLoader(dataset, batch_size=4, sampler=DistributedSampler(dataset))
"""


def _switched_on(call: str, switch: LoaderSwitch, before: str = "") -> bool:
    """Whether `call`, after the statements `before`, may turn `switch` on."""
    source = f"{before}{call}\n"
    ctx = FileContext("train.py", source, cst.parse_module(source))
    return switched_on(ctx, next(c for c in ctx.calls if ctx.code(c) == call), switch)


def test_the_switch_a_sampler_is_built_under() -> None:
    ctx = FileContext("data.py", HELPER, cst.parse_module(HELPER))
    switches = loader_switches(ctx)
    assert switches == {"build": (("dist", 2, True, False, ""),)}


@pytest.mark.parametrize(
    ("call", "on"),
    [
        ("build(ds, 8)", False),  # the default: no sampler
        ("build(ds, 8, dist=False)", False),
        ("build(ds, 8, False)", False),
        ("build(ds, 8, dist=True)", True),
        ("build(ds, 8, True)", True),
        ("build(ds, 8, dist=args.distributed)", True),  # out of sight: may be on
        ("build(ds, 8, **options)", True),
        # a keyword decides alone: Python refuses a second value from `**` or `*`
        ("build(ds, 8, dist=False, **cfg.loader)", False),  # ISBNet's validation loader
        ("build(ds, *sizes, dist=False)", False),
        ("build(ds, 8, dist=True, **cfg.loader)", True),
    ],
)
def test_a_call_turns_the_switch_on_or_off(call: str, on: bool) -> None:
    assert _switched_on(call, ("dist", 2, True, False, "")) is on


@pytest.mark.parametrize(
    ("options", "on"),
    [
        ('options = {"num_workers": 0, "pin_memory": True}\n', False),
        ('options = {"num_workers": 0} if cuda else {}\n', False),  # flyte's test loader
        ('options = {"dist": True}\n', True),
        ('options = {"num_workers": 0, **extra}\n', True),
        ("options = load_options()\n", True),
    ],
)
def test_keyword_arguments_from_dict_literals_pass_only_their_keys(options: str, on: bool) -> None:
    assert _switched_on("build(ds, 8, **options)", ("dist", 2, True, False, ""), options) is on


def test_literal_truth() -> None:
    assert [truth(cst.parse_expression(s)) for s in ("True", "0", "None", "flag")] == [
        True,
        False,
        False,
        None,
    ]


SIZED = """\
from torch.utils.data import DataLoader, DistributedSampler


def load(dataset, batch_size, shuffle, world_size, rank):
    if world_size > 1:
        sampler = DistributedSampler(dataset, world_size, rank, shuffle)
        return DataLoader(dataset, batch_size, sampler=sampler)
    return DataLoader(dataset, batch_size, shuffle)
"""


def test_a_shard_built_only_for_more_than_one_process() -> None:
    ctx = FileContext("data.py", SIZED, cst.parse_module(SIZED))
    assert shard_switches(ctx) == {"load": (("world_size", 3, True, None, "> 1"),)}


@pytest.mark.parametrize(
    ("call", "on"),
    [
        ("load(ds, 8, False, 1, None)", False),  # one process: the whole dataset
        ("load(ds, 8, True, args.world_size, rank)", True),
        ("load(ds, 8, True, 4, rank)", True),
        ("load(ds, 8, True, world_size=1, rank=None)", False),
    ],
)
def test_a_call_gives_the_world_size(call: str, on: bool) -> None:
    assert _switched_on(call, ("world_size", 3, True, None, "> 1")) is on


def test_comparison_truth() -> None:
    one = cst.parse_expression("1")
    assert switch_truth(one, "> 1") is False
    assert switch_truth(one, "== 1") is True
    assert switch_truth(cst.parse_expression("n"), "> 1") is None

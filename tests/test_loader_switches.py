"""A helper that builds its loader's DistributedSampler only under a test of one of its
parameters (`if not dist: ... else: DistributedSampler(...)`) returns no such loader to a
caller that leaves the parameter off: the project's answer to "does this call return a
loader on a shuffling DistributedSampler" follows the argument."""

from __future__ import annotations

import libcst as cst
import pytest

from ddplint.context import FileContext
from ddplint.domain.samplers import loader_switches, truth
from ddplint.project.queries import _switched_on

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


def _call(source: str) -> cst.Call:
    expr = cst.parse_expression(source)
    assert isinstance(expr, cst.Call)
    return expr


def test_the_switch_a_sampler_is_built_under() -> None:
    ctx = FileContext("data.py", HELPER, cst.parse_module(HELPER))
    switches = loader_switches(ctx)
    assert switches == {"build": (("dist", 2, True, False),)}


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
    ],
)
def test_a_call_turns_the_switch_on_or_off(call: str, on: bool) -> None:
    assert _switched_on(_call(call), ("dist", 2, True, False)) is on


def test_literal_truth() -> None:
    assert [truth(cst.parse_expression(s)) for s in ("True", "0", "None", "flag")] == [
        True,
        False,
        False,
        None,
    ]

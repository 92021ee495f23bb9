"""Which models a loss reaches backward() through (`Backward.forwards`), and whether DDP
averages their gradients (`DDPFacts.is_plain_model`): DDP005 leaves a division by the world
size alone only when every such model is a plain module built in the file."""

from __future__ import annotations

import libcst as cst
import pytest

from ddplint.context import FileContext
from ddplint.domain import domain_of
from ddplint.domain.ddp_facts import facts_of

HEAD = """\
import copy
import torch
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def step(model, xs):
    net = nn.Linear(4, 2)
"""
LOSS = """\
    outs = []
    for x in xs:
        outs.append(ref(x))
    total = torch.stack(outs).sum()
    total.backward()
"""


def _models(source: str) -> list[tuple[str, bool]]:
    ctx = FileContext("t.py", source, cst.parse_module(source))
    backward = domain_of(ctx).backward
    (site,) = backward.sites
    return [
        (ctx.code(f.model), facts_of(ctx).is_plain_model(f.model, f.call))
        for f in backward.forwards(site)
    ]


@pytest.mark.parametrize(
    ("binding", "models"),
    [
        ("    ref = copy.deepcopy(net)\n", [("ref", True)]),
        ("    ref = net\n    ddp = DDP(net)\n", [("ref", False)]),  # its parameters are DDP's
        ("    ref = DDP(net)\n", [("ref", False)]),
        ("    ref = torch.compile(DDP(net))\n", [("ref", False)]),
        ("    ref = model\n", [("ref", False)]),  # a parameter: built who knows where
    ],
)
def test_models_a_collected_loss_comes_from(binding, models):
    assert _models(HEAD + binding + LOSS) == models


def test_attribute_models_and_explicit_forward():
    source = HEAD + "    loss = self.head(model.forward(xs)).mean()\n    loss.backward()\n"
    assert [m for m, _ in _models(source)] == ["self.head", "model"]


def test_methods_of_values_are_not_models():
    source = HEAD + "    out = net(xs)\n    out.to_dict()['a'].sum().backward()\n"
    assert _models(source) == [("net", True)]

"""Which layers a model holds (`ddplint.domain.model_layers`): the BatchNorm answer DDP017 uses."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from ddplint.context import FileContext
from ddplint.domain.model_layers import ModelLayers, handles_batchnorm

HEADER = """\
import torch
import torchvision
from torch import nn
from torchvision import models
"""


def _context(body: str) -> FileContext:
    source = HEADER + textwrap.dedent(body)
    return FileContext("train.py", source, cst.parse_module(source))


def _last_use(ctx: FileContext) -> tuple[cst.BaseExpression, cst.CSTNode]:
    """The argument of the last `use(...)` call, and the call."""
    call = [c for c in ctx.calls if isinstance(c.func, cst.Name) and c.func.value == "use"][-1]
    return call.args[0].value, call


@pytest.mark.parametrize(
    "body",
    [
        "model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8))\nuse(model)",
        "model = torchvision.models.resnet50().cuda(0).eval()\nuse(model)",
        "model = models.resnet18(norm_layer=nn.BatchNorm2d)\nuse(model.to('cuda'))",
        """\
        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.bn = nn.BatchNorm1d(4)

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.block = Block()

        def build():
            return Net()

        net = build()
        use(net)
        """,
    ],
)
def test_models_built_with_batchnorm(body):
    ctx = _context(body)
    model, at = _last_use(ctx)
    assert ModelLayers(ctx).has_batchnorm(model, at)


@pytest.mark.parametrize(
    "body",
    [
        "head = nn.BatchNorm1d(4)\nmodel = nn.Sequential(nn.Linear(4, 4), nn.GroupNorm(2, 4))\n"
        "use(model)",
        "head = nn.BatchNorm1d(4)\nmodel = models.resnet18(norm_layer=lambda c: nn.GroupNorm(8, c))"
        "\nuse(model)",
        "head = nn.BatchNorm1d(4)\nmodel = models.vit_b_16()\nuse(model)",
    ],
)
def test_models_without_batchnorm(body):
    ctx = _context(body)
    model, at = _last_use(ctx)
    assert not ModelLayers(ctx).has_batchnorm(model, at)


def test_architecture_chosen_at_run_time():
    ctx = _context("model = models.__dict__[arch](pretrained=False).cuda()\nuse(model)")
    model, at = _last_use(ctx)
    layers = ModelLayers(ctx)
    assert not layers.builds_batchnorm
    built = layers.runtime_architecture(model, at)
    assert built is not None and ctx.code(built.func) == "models.__dict__[arch]"


@pytest.mark.parametrize(
    ("body", "handled"),
    [
        ("model = nn.SyncBatchNorm.convert_sync_batchnorm(model)", True),
        ("frozen = [m for m in model.modules() if isinstance(m, nn.BatchNorm2d)]", True),
        ("from apex.parallel import convert_syncbn_model", True),
        ("ok = isinstance(m, (nn.Linear, nn.GroupNorm))", False),
    ],
)
def test_files_that_handle_batchnorm_themselves(body, handled):
    assert handles_batchnorm(_context(body)) is handled

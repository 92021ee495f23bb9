"""Which DDP-wrapped models ddplint knows to have no buffers (DDP021 relies on it)."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from ddplint.api import lint_source
from ddplint.context import FileContext
from ddplint.domain.ddp_facts import facts_of
from ddplint.domain.model_layers import ModelLayers

HEADER = """
import torch
import torch.nn as nn
import torchvision
from torch.nn.parallel import DistributedDataParallel as DDP
from mylib.models import Backbone
"""


def _free(body: str) -> bool:
    source = HEADER + textwrap.dedent(body)
    ctx = FileContext("t.py", source, cst.parse_module(source))
    (wrap,) = facts_of(ctx).ddp_wraps
    return ModelLayers(ctx).wraps_buffer_free_model(wrap)


FREE = {
    "layers of the file, compiled and moved": """
        class Block(nn.Module):
            def __init__(self, d):
                super().__init__()
                self.norm = nn.LayerNorm(d)
                self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

        class Net(nn.Module):
            def __init__(self, d, n):
                super().__init__()
                self.emb = nn.Embedding(100, d)
                self.blocks = nn.ModuleList([Block(d) for _ in range(n)])
                self.apply(self._init)

            def _init(self, m):
                torch.nn.init.normal_(m.weight)

        model = Net(64, 2)
        model = torch.compile(model)
        model.to("cuda")
        ddp = DDP(model.cuda(), device_ids=[0])
    """,
    "a method called from __init__": """
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.layers = self._make(4)

            def _make(self, n):
                return nn.Sequential(*[nn.Linear(8, 8) for _ in range(n)])

        ddp = DDP(Net(), device_ids=[0])
    """,
    "an nn.Sequential of buffer-free layers": """
        model = nn.Sequential(nn.Linear(16, 64), nn.GELU(), nn.LayerNorm(64), nn.Linear(64, 1))
        ddp = DDP(model.cuda(), device_ids=[0])
    """,
}

NOT_FREE = {
    "an nn.Sequential of parts it does not show": """
        blocks = [nn.Linear(8, 8), nn.BatchNorm1d(8)]
        ddp = DDP(nn.Sequential(*blocks), device_ids=[0])
    """,
    "register_buffer": """
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(8, 8)
                if not hasattr(torch.nn.functional, "scaled_dot_product_attention"):
                    self.register_buffer("mask", torch.tril(torch.ones(8, 8)))

        ddp = DDP(Net(), device_ids=[0])
    """,
    "BatchNorm in a submodule of the file": """
        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.bn = nn.BatchNorm2d(8)

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.block = Block()

        ddp = DDP(Net(), device_ids=[0])
    """,
    "InstanceNorm (running statistics optional)": """
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.norm = nn.InstanceNorm2d(8, track_running_stats=True)

        ddp = DDP(Net(), device_ids=[0])
    """,
    "a layer of another module": """
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.backbone = Backbone()

        ddp = DDP(Net(), device_ids=[0])
    """,
    "a base class of another module": """
        class Net(Backbone):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(8, 8)

        ddp = DDP(Net(), device_ids=[0])
    """,
    "a torchvision model": """
        ddp = DDP(torchvision.models.resnet50(), device_ids=[0])
    """,
    "a model of unknown origin": """
        def wrap(model):
            return DDP(model, device_ids=[0])
    """,
    "one of two classes has buffers": """
        class Small(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(8, 8)

        class Big(nn.Module):
            def __init__(self):
                super().__init__()
                self.bn = nn.BatchNorm1d(8)

        model = Small() if torch.cuda.device_count() < 2 else Big()
        ddp = DDP(model, device_ids=[0])
    """,
}


@pytest.mark.parametrize("body", FREE.values(), ids=FREE.keys())
def test_buffer_free_models(body: str) -> None:
    assert _free(body)


@pytest.mark.parametrize("body", NOT_FREE.values(), ids=NOT_FREE.keys())
def test_models_that_may_have_buffers(body: str) -> None:
    assert not _free(body)


def _buffered(body: str) -> bool:
    source = HEADER + textwrap.dedent(body)
    ctx = FileContext("t.py", source, cst.parse_module(source))
    (wrap,) = facts_of(ctx).ddp_wraps
    return ModelLayers(ctx).wraps_buffered_model(wrap)


BUFFERED = ("register_buffer", "BatchNorm in a submodule of the file", "a torchvision model")
UNKNOWN = (
    "a layer of another module",
    "a base class of another module",
    "a model of unknown origin",
)


@pytest.mark.parametrize("name", BUFFERED)
def test_models_certain_to_have_buffers(name: str) -> None:
    assert _buffered(NOT_FREE[name])


@pytest.mark.parametrize("name", UNKNOWN + tuple(FREE))
def test_models_not_known_to_have_buffers(name: str) -> None:
    assert not _buffered(NOT_FREE.get(name) or FREE[name])


RANK0_FORWARD = """
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from mylib.models import Backbone


class Local(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1d(8)


def main(local_rank):
    dist.init_process_group("nccl")
    model = DDP(MODEL.cuda(), device_ids=[local_rank])
    if dist.get_rank() == 0:
        print(model(torch.randn(4, 8).cuda()))


if __name__ == "__main__":
    main(0)
"""


@pytest.mark.parametrize(
    ("model", "unproven"), [("Local()", False), ("Backbone()", True)], ids=["buffers", "unknown"]
)
def test_rank0_forward_proven_only_with_known_buffers(model: str, unproven: bool) -> None:
    """With gradients on too, a rank-0 forward through a model whose buffers this file cannot
    see (a class of another module) is unproven; through one with BatchNorm, proven."""
    (finding,) = lint_source(RANK0_FORWARD.replace("MODEL", model), select=["DDP021"])
    assert finding.unproven is unproven


@pytest.mark.parametrize(
    "convert",
    [
        "nn.SyncBatchNorm.convert_sync_batchnorm(model)",
        "torch.nn.SyncBatchNorm.convert_sync_batchnorm(module=model)",
    ],
)
def test_a_sync_batchnorm_conversion_keeps_the_models_buffers(convert: str) -> None:
    """`convert_sync_batchnorm` returns the module it is given, BatchNorm layers made
    SyncBatchNorm: the buffers are the same, and so is what the wrap holds."""
    body = f"""
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.bn = nn.BatchNorm1d(8)

        model = Net().cuda()
        model = {convert}
        ddp = DDP(model, device_ids=[0])
    """
    assert _buffered(body)
    assert not _free(body)

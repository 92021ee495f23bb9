"""Names resolve through imports and aliases, so rules never match on spelling."""

from __future__ import annotations

import libcst as cst
import pytest

from ddplint.context import FileContext

DDP = "torch.nn.parallel.DistributedDataParallel"


def call_names(source: str) -> list[str | None]:
    ctx = FileContext("t.py", source, cst.parse_module(source))
    return [ctx.call_name(c) for c in ctx.calls]


@pytest.mark.parametrize(
    "source",
    [
        "from torch.nn.parallel import DistributedDataParallel as DDP\nDDP(m)\n",
        "import torch\ntorch.nn.parallel.DistributedDataParallel(m)\n",
        "from torch import nn\nnn.parallel.DistributedDataParallel(m)\n",
        "import torch.nn as nn\nnn.parallel.DistributedDataParallel(m)\n",
        "from torch.nn.parallel import DistributedDataParallel as Wrap\nWrap(m)\n",
        "from torch.nn.parallel.distributed import DistributedDataParallel\n"
        "DistributedDataParallel(m)\n",
        "import torch.nn.parallel as par\npar.DistributedDataParallel(m)\n",
    ],
)
def test_every_spelling_of_ddp_resolves_to_one_name(source):
    assert call_names(source) == [DDP]


def test_unimported_names_do_not_resolve():
    # A local class that happens to share the name is not DDP.
    assert call_names("class DDP: ...\nDDP(m)\n") == [None]


def test_collectives_and_samplers():
    source = (
        "import torch.distributed as dist\n"
        "from torch.utils.data.distributed import DistributedSampler as DS\n"
        "from torch.distributed import all_reduce\n"
        "dist.barrier(); DS(ds); all_reduce(t)\n"
    )
    assert call_names(source) == [
        "torch.distributed.barrier",
        "torch.utils.data.DistributedSampler",
        "torch.distributed.all_reduce",
    ]


def test_relative_imports_keep_their_level():
    assert call_names("from .utils import save_on_master\nsave_on_master(x)\n") == [
        ".utils.save_on_master"
    ]


def test_a_later_plain_import_rebinds_the_name():
    # `import models` (a project package) replaces `import torchvision.models as models`.
    shadowed = "import torchvision.models as models\nimport models\nmodels.vit()\n"
    aliased = "import models\nimport torchvision.models as models\nmodels.resnet50()\n"
    submodule = "import os\nimport os.path\nos.getcwd()\n"
    assert call_names(shadowed) == ["models.vit"]
    assert call_names(aliased) == ["torchvision.models.resnet50"]
    assert call_names(submodule) == ["os.getcwd"]

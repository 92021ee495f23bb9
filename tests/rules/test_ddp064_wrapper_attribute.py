"""DDP064: what the DDP wrapper lacks, read on a name that holds it; left alone where the
read is guarded, set on the wrapper, or the name may hold something else that wraps."""

from __future__ import annotations

import textwrap

import pytest

from ddplint.api import lint_source

HEADER = """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

"""


def findings(body: str) -> list[tuple[int, str]]:
    offset = HEADER.count("\n")
    found = lint_source(HEADER + textwrap.dedent(body), select=["DDP064"])
    return [(d.start.row - offset, d.message) for d in found]


def test_a_method_of_the_wrapped_model_on_the_wrapper():
    found = findings(
        """\
        def main(net, x, rank):
            model = DDP(net.to(rank), device_ids=[rank]).train()
            return model.reset_states(x)
        """
    )
    assert [row for row, _ in found] == [3]
    assert "`model` holds the DistributedDataParallel wrapper here" in found[0][1]
    assert "'DistributedDataParallel' object has no attribute 'reset_states'" in found[0][1]


def test_the_wrapper_on_the_distributed_path_only_says_so():
    found = findings(
        """\
        def main(net, x, distributed, rank):
            model = net.cuda()
            if distributed:
                model = DDP(model, device_ids=[rank])
            return model.encode_image(x)
        """
    )
    assert [row for row, _ in found] == [5]
    assert "where the job is distributed" in found[0][1]


@pytest.mark.parametrize(
    "body",
    [
        # the wrapper's own members
        "model = DDP(net)\nmodel.module.encode(x)\nmodel.no_sync()\nmodel.device_ids\n",
        # guarded by a test of the name, or a handler of the missing attribute
        "model = DDP(net)\nif hasattr(model, 'encode'):\n    model.encode(x)\n",
        "model = DDP(net)\nif not isinstance(model, DDP):\n    model.encode(x)\n",
        "model = DDP(net)\ntry:\n    model.encode(x)\nexcept AttributeError:\n    pass\n",
        # set or registered on the wrapper itself
        "model = DDP(net)\nmodel.step_count = 0\nmodel.step_count += 1\n",
        "model = DDP(net)\nmodel.register_buffer('mask', x)\nmodel.mask\n",
        # on the branch where the wrapper is not built
        "if flag:\n    model = DDP(net)\nelse:\n    model = net\n"
        "if not flag:\n    model.encode(x)\n",
        # compiled after the wrap: a different object
        "model = torch.compile(DDP(net))\nmodel.encode(x)\n",
        # private names
        "model = DDP(net)\nmodel._set_static_graph()\n",
        # an engine unpacked from a call out of sight on the other path (DeepSpeed's)
        "if not flag:\n    model = DDP(net)\nelse:\n"
        "    model, opt, _, _ = deepspeed.initialize(model=net)\n"
        "model.backward(x)\nmodel.step()\n",
    ],
)
def test_left_alone(body):
    source = "def main(net, x, flag):\n" + textwrap.indent(body, "    ")
    assert findings(source) == []


def test_a_subclass_of_ddp_may_forward_attributes():
    body = """\
    class Forwarding(DDP):
        def __getattr__(self, name):
            try:
                return super().__getattr__(name)
            except AttributeError:
                return getattr(self.module, name)

    def main(net, x, distributed):
        model = Forwarding(net) if distributed else DDP(net)
        return model.encode(x)
    """
    assert findings(body) == []

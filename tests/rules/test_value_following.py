"""Rules that ask the one value resolver instead of following names themselves: what a
name holds through a helper's return (DDP003, DDP016) and which function a call runs
(DDP007, a method called through `self`)."""

from __future__ import annotations

import textwrap

from ddplint.api import lint_source

HEADER = """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import BatchSampler, DataLoader, DistributedSampler
"""


def rows(body: str, code: str) -> list[int]:
    source = HEADER + textwrap.dedent(body)
    offset = HEADER.count("\n")
    return [d.start.row - offset for d in lint_source(source, select=[code])]


CLIP_IN_METHOD = """
class Trainer:
    def __init__(self, model, optimizer):
        self.model = DDP(model)
        self.optimizer = optimizer

    def {helper}(self):
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)

    def micro_step(self, x):
        with self.model.no_sync():
            self.model(x).sum().backward()
            self.{called}()
"""


def test_ddp007_follows_a_method_called_inside_no_sync():
    assert rows(CLIP_IN_METHOD.format(helper="clip", called="clip"), "DDP007") == [8]
    assert rows(CLIP_IN_METHOD.format(helper="clip", called="other"), "DDP007") == []


FIND_UNUSED = """
def unused_parameters():
    return {value}

def wrap(model, local_rank):
    return DDP(model, device_ids=[local_rank], find_unused_parameters=unused_parameters())
"""


def test_ddp016_follows_a_helper_to_its_constant():
    assert rows(FIND_UNUSED.format(value="True"), "DDP016") == [6]
    assert rows(FIND_UNUSED.format(value="cfg.find_unused"), "DDP016") == []

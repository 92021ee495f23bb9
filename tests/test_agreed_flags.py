"""A skip decided on a flag the ranks agreed through a collective is taken on every rank
(`rank_local_tests.agreed`): the reduced tensor itself, or a value computed from reduced
tensors alone (`invalid_flag.item() > 0`), also where the all-reduce runs only when the
job is distributed (OpenStereo). The collective's options (`op=`) reduce nothing."""

from __future__ import annotations

import pytest

from ddplint.api import lint_source

STEP = """
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def train(model, loader, optimizer, distributed):
    model = DDP(model)
    for x in loader:
        loss = model(x).sum()
        bad = torch.tensor([int(torch.isnan(loss))], device=loss.device)
        if distributed and dist.is_initialized():
            dist.all_reduce(bad, op=dist.ReduceOp.SUM)
        {decide}
        if skip:
            continue
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
"""


@pytest.mark.parametrize(
    ("decide", "found"),
    [
        ("skip = bad.item() > 0", 0),
        ("skip = bool(bad)", 0),
        ("skip = bad.item() > 0 or torch.isinf(loss)", 1),
    ],
    ids=["reduced flag", "reduced flag converted", "with this rank's own loss"],
)
def test_a_skip_on_an_agreed_flag_is_every_ranks(decide: str, found: int) -> None:
    assert len(lint_source(STEP.format(decide=decide), select=["DDP011"])) == found

"""DDP046: parameters frozen after the DDP wrap, reported where the wrapper of the same
function still holds them."""

from __future__ import annotations

from ddplint.api import lint_source

SCRIPT = """\
import torch
from torch.nn.parallel import DistributedDataParallel as DDP

def main(net, loader, local_rank):
    model = DDP(net.cuda(local_rank), device_ids=[local_rank])
    for p in model.module.encoder.parameters():
        p.requires_grad = False
{rewrap}    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
"""


def test_a_freeze_after_the_wrap_names_the_error_of_the_next_iteration():
    (found,) = lint_source(SCRIPT.format(rewrap=""), select=["DDP046"])
    assert "model.module.encoder" in found.message
    assert "Expected to have finished reduction" in found.message


def test_wrapping_again_after_the_freeze_is_clean():
    rewrap = "    model = DDP(model.module, device_ids=[local_rank])\n"
    assert lint_source(SCRIPT.format(rewrap=rewrap), select=["DDP046"]) == []

"""DDP011 where the step runs only the module inside the DDP wrapper: the wrapper's forward
never prepares DDP for a backward, so the backward all-reduces nothing and a rank-local
skip leaves no rank waiting (DDP026 reports the bypass itself)."""

from __future__ import annotations

from ddplint.api import lint_source

STEP = """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def compute_loss(model, batch):
    return {loss}


def train(net, loader, optimizer, local_rank):
    dist.init_process_group("nccl")
    model = DDP(net.cuda(), device_ids=[local_rank])
    for batch in loader:
        loss = compute_loss(model, batch)
        if not torch.isfinite(loss):
            continue
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
"""


def ddp011(loss: str) -> list[tuple[int, bool]]:
    found = lint_source(STEP.format(loss=loss), select=["DDP011"])
    return [(d.start.row, d.unproven) for d in found]


def test_a_helper_running_the_wrappers_forward_hangs_the_others():
    assert ddp011("model(batch).mean()") == [(16, False)]


def test_a_helper_running_only_the_inner_module_leaves_no_one_waiting():
    assert ddp011("model.module.diffusion_loss(batch)") == []


def test_a_helper_that_reads_the_wrapper_whole_counts_as_its_forward():
    # `model.module` and `model` both read: the wrapper itself may run
    assert ddp011("model.module.scale * model(batch).mean()") == [(16, False)]

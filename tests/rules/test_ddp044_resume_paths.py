"""DDP044 on a resume that rank 0 loads after the wrap: left alone on the branch that runs
without DDP (`parallel_method` not `"DistributedDataParallel"`), unproven where the keys
lose their `module.` prefix before a strict load into the wrapper (it raises there)."""

from __future__ import annotations

import textwrap

from ddplint.api import lint_source

RESUME = """\
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def main(net, loader, epochs, parallel_method, path):
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    if parallel_method == "DistributedDataParallel":
        dist.init_process_group("nccl")
        model = DDP(net.cuda(), device_ids=[local_rank])
    else:
        model = net.cuda()
    optimizer = torch.optim.AdamW(model.parameters())
    if local_rank == 0 and os.path.exists(path):
        state = torch.load(path, map_location="cpu")
{loading}
    for epoch in range(epochs):
        for x, y in loader:
            loss = torch.nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
"""


def rows(loading: str) -> list[tuple[int, bool]]:
    source = RESUME.format(loading=textwrap.indent(textwrap.dedent(loading), " " * 8))
    return [(d.start.row, d.unproven) for d in lint_source(source, select=["DDP044"])]


def test_the_one_process_branch_of_a_parallel_method_switch_is_left_alone():
    loading = """\
        if parallel_method == "DistributedDataParallel":
            model.module.load_state_dict(state)
        else:
            model.load_state_dict(state)
    """
    assert rows(loading) == [(19, False)]


def test_keys_stripped_before_a_strict_load_into_the_wrapper_are_unproven():
    stripped = """\
        if all(k.startswith("module.") for k in state):
            state = {k[7:]: v for k, v in state.items()}
        model.load_state_dict(state)
    """
    assert rows(stripped) == [(20, True)]
    replaced = """\
        state = {k.replace("module.", ""): v for k, v in state.items()}
        model.module.load_state_dict(state)
    """
    assert rows(replaced) == [(19, False)]  # the bare module takes the bare keys
    relaxed = """\
        state = {k.replace("module.", ""): v for k, v in state.items()}
        model.load_state_dict(state, strict=False)
    """
    assert rows(relaxed) == [(19, False)]

"""`runners.one_process`: code runs where the job is not distributed when every path to
it does: in a single-process branch, or in a helper this file calls only from one."""

from __future__ import annotations

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain.runners import one_process

SOURCE = """\
import os

import torch
import torch.distributed as dist


def place(model):
    return model.cuda()


def shared(model):
    return model.cuda()


def main(model):
    if int(os.environ.get("WORLD_SIZE", "1")) == 1:
        model = place(model)
        model = shared(model)
    else:
        dist.init_process_group("nccl")
        model = shared(model)
    return model.cuda()


if __name__ == "__main__":
    main(torch.nn.Linear(2, 2))
"""


def _answers() -> dict[str, bool]:
    ctx = FileContext("train.py", SOURCE, cst.parse_module(SOURCE))
    cuda = [c for c in ctx.calls if ctx.code(c.func).strip() == "model.cuda"]
    return {ctx.enclosing_function(c).name.value: one_process(ctx, c) for c in cuda}


def test_a_helper_called_only_where_the_job_is_not_distributed_runs_in_one_process():
    assert _answers() == {"place": True, "shared": False, "main": False}

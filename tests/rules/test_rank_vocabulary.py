"""The rank vocabulary and rank gates (issue 8, holdout classes H2, H6, H8 and fairseq's
property gate): names and helpers that hold a rank, main-only decorators, files of one
process's own, and branches no call can reach."""

from __future__ import annotations

import json
import textwrap

import pytest

from ddplint.api import lint_source
from ddplint.domain.apis import MAIN_PROCESS_NAME

HEADER = """\
import math
import os
import tempfile
import torch
import torch.nn as nn
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
"""


def rows(body: str, code: str) -> list[int]:
    source = HEADER + textwrap.dedent(body)
    offset = HEADER.count("\n")
    return [d.start.row - offset for d in lint_source(source, select=[code])]


GATED_SAVE = """
from launcher_env import ranks_of_this_process

class Trainer:
    def __init__(self, model):
        self.model = DDP(model)
        self.local_rank, self.{name} = ranks_of_this_process()

    def checkpoint_save(self):
        if self.{name} != 0:
            return
        torch.save(self.model.module.state_dict(), "checkpoint.pt")

    def run(self):
        for epoch in range(3):
            self.checkpoint_save()

def main():
    dist.init_process_group("nccl")
    Trainer(nn.Linear(2, 2)).run()
"""


@pytest.mark.parametrize(
    "name", ["distributed_rank", "dist_rank", "_rank", "data_parallel_rank", "global_rank"]
)
def test_ddp013_a_job_rank_named_by_its_words_gates_the_save(name):
    assert rows(GATED_SAVE.format(name=name), "DDP013") == []


@pytest.mark.parametrize("name", ["lora_rank", "tensor_parallel_rank", "rank_size"])
def test_ddp013_other_ranks_do_not_gate_the_save(name):
    # A LoRA rank, a model-parallel rank, a size: not this process's place in the job.
    assert rows(GATED_SAVE.format(name=name), "DDP013") == [16]


def test_ddp010_a_distributed_rank_gate_around_a_barrier_is_a_rank_condition():
    body = """
    from launcher_env import ranks_of_this_process

    def main():
        dist.init_process_group("nccl")
        local_rank, distributed_rank = ranks_of_this_process()
        if distributed_rank == 0:
            dist.barrier()
    """
    assert rows(body, "DDP010") == [8]


def test_ddp013_property_chain_to_a_data_parallel_rank_gates_the_save():
    body = """
    from parallel_state import get_data_parallel_rank

    class Trainer:
        def __init__(self, model):
            self.model = DDP(model)

        @property
        def is_data_parallel_master(self):
            return get_data_parallel_rank() == 0

        @property
        def should_save(self):
            return self.is_data_parallel_master

        def save(self, path):
            if self.should_save:
                torch.save(self.model.module.state_dict(), path)

    def main():
        dist.init_process_group("nccl")
        Trainer(nn.Linear(2, 2)).save("last.pt")
    """
    assert rows(body, "DDP013") == []


HANDLER = """
import ignite.distributed as idist

class Upload:
    {decorator}
    def save(self, checkpoint):
        {save}

def main():
    dist.init_process_group("nccl")
    model = DDP(nn.Linear(2, 2))
    Upload().save({{"model": model.module.state_dict()}})
"""
FIXED_FILE = 'torch.save(checkpoint, "model.pt")'
TEMP_FILE = """with tempfile.NamedTemporaryFile() as tmp:
            torch.save(checkpoint, tmp.{attribute})"""


@pytest.mark.parametrize(
    ("decorator", "save", "expected"),
    [
        ("", FIXED_FILE, [12]),
        ("@idist.one_rank_only()", FIXED_FILE, []),
        ("", TEMP_FILE.format(attribute="file"), []),
        ("", TEMP_FILE.format(attribute="name"), []),
    ],
)
def test_ddp013_one_rank_only_decorator_and_fresh_temporary_files(decorator, save, expected):
    body = HANDLER.format(decorator=decorator, save=save)
    assert rows(body, "DDP013") == expected


STEP = """\
import math
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class Runner:
    def __init__(self):
        dist.init_process_group("nccl")
        self.model = DDP(nn.Linear(4, 1))
        self.optim = torch.optim.SGD(self.model.parameters(), lr=0.1)

    def {step}(self, x, strict=True):
        loss = self.model(x).sum()
        if not math.isfinite(loss.item()):
            if strict:
                raise FloatingPointError("bad loss")
            else:
                return
        loss.backward()
        self.optim.step()

    def fit(self, batches):
        for x in batches:
            {call}
"""


def ddp011_rows(cli, tmp_path, step: str, call: str, elsewhere: str = "") -> list[int]:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n", encoding="utf-8")
    (tmp_path / "train.py").write_text(STEP.format(step=step, call=call), encoding="utf-8")
    if elsewhere:
        (tmp_path / "other.py").write_text(elsewhere, encoding="utf-8")
    result = cli("check", "--no-cache", "--select", "DDP011", "--output-format", "json", tmp_path)
    return [d["location"]["row"] for d in json.loads(result.out)]


def test_ddp011_exit_reachable_only_with_a_value_no_call_passes_is_left_alone(cli, tmp_path):
    assert ddp011_rows(cli, tmp_path, "_step_once", "self._step_once(x)") == []


@pytest.mark.parametrize(
    ("step", "call", "elsewhere"),
    [
        ("_step_once", "self._step_once(x, strict=False)", ""),  # a call asks for it
        ("_step_once", "self._step_once(x, False)", ""),  # positionally
        ("_step_once", "self._step_once(*[x])", ""),  # arguments unknown
        # a module that may run on every rank (it names torch.distributed) passes it
        (
            "_step_once",
            "self._step_once(x)",
            "import torch.distributed as dist\nrunner._step_once(x, strict=False)\n",
        ),
    ],
)
def test_ddp011_exit_that_a_call_may_reach_is_reported(cli, tmp_path, step, call, elsewhere):
    assert ddp011_rows(cli, tmp_path, step, call, elsewhere) == [20]


def test_ddp011_exit_only_a_caller_out_of_sight_may_reach_is_unproven(cli, tmp_path):
    """A public method every call of the project makes without the value: a caller
    outside may pass it, so whether the exit runs is unknown (`--preview`)."""
    assert ddp011_rows(cli, tmp_path, "step_once", "self.step_once(x)") == []
    result = cli(
        *("check", "--no-cache", "--preview", "--select", "DDP011"),
        *("--output-format", "json", tmp_path),
    )
    assert [(d["location"]["row"], d["unproven"]) for d in result.json()] == [(20, True)]


@pytest.mark.parametrize(
    ("name", "asks"),
    [
        ("is_main_process", True),
        ("is_master", True),
        ("master_process", True),
        ("is_main_worker", True),
        ("main_worker", False),  # the ImageNet example's worker function, run by every rank
        ("master_worker", False),
    ],
)
def test_a_main_process_question_is_named_as_one(name: str, asks: bool) -> None:
    assert bool(MAIN_PROCESS_NAME.match(name)) is asks

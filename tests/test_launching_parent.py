"""Where the parent that launches the workers runs alone (`processes.runs_in_one_process`):
a `__main__` block that spawns this file's workers runs by itself once they have joined,
and a training script's `def test(epoch):` is no one-process pytest test."""

from __future__ import annotations

import textwrap

import pytest

from ddplint.api import lint_source

SPAWNING = """\
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP


def worker(rank, world_size):
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    torch.cuda.set_device(rank)
    model = DDP(torch.nn.Linear(4, 4).cuda(rank), device_ids=[rank])
    model(torch.randn(2, 4).cuda(rank)).sum().backward()


if __name__ == "__main__":
    n = torch.cuda.device_count()
    {launch}
    final = torch.nn.Linear(4, 4).to("cuda:0")
"""


def _cuda0_findings(launch: str) -> list[int]:
    source = SPAWNING.replace("{launch}", launch)
    return [d.start.row for d in lint_source(source, select=["DDP001"]) if not d.unproven]


@pytest.mark.parametrize(
    "launch",
    [
        "mp.spawn(worker, args=(n,), nprocs=n)",
        "mp.spawn(worker, args=(n,), nprocs=n, join=True)",
        "mp.spawn(worker, (n,), n, True)",
    ],
)
def test_the_parent_after_joined_workers_runs_alone(launch: str) -> None:
    assert _cuda0_findings(launch) == []


@pytest.mark.parametrize(
    "launch",
    [
        "context = mp.spawn(worker, args=(n,), nprocs=n, join=False)",
        "context = mp.spawn(worker, (n,), n, False)",
        "context = mp.spawn(worker, args=(n,), nprocs=n, join=wait)",
    ],
)
def test_a_parent_that_may_not_wait_runs_beside_its_workers(launch: str) -> None:
    assert _cuda0_findings(launch) == [17]


TRAINING_SCRIPT = """\
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

dist.init_process_group("nccl")
loader = DataLoader(data, batch_size=64, sampler=DistributedSampler(data, shuffle=False))


def test(epoch):
    torch.save(model.module.state_dict(), "last.pt")
"""


@pytest.mark.parametrize(
    ("path", "header", "reported"),
    [
        ("train.py", "", True),
        ("test_train.py", "", False),
        ("checks.py", "import pytest\n", False),
    ],
)
def test_a_test_function_is_pytest_s_only_where_pytest_collects_it(
    path: str, header: str, reported: bool
) -> None:
    source = header + textwrap.dedent(TRAINING_SCRIPT)
    found = [d for d in lint_source(source, path, select=["DDP013"]) if not d.unproven]
    assert bool(found) is reported

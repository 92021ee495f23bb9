"""Second holdout classes S2, S3, S9 and S12 (issue 8): each concept, and the case next to
it that must still be reported."""

from __future__ import annotations

import textwrap

import pytest

from ddplint.api import lint_source

HEADER = """\
import os
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP
"""


def rows(body: str, code: str) -> list[int]:
    source = HEADER + textwrap.dedent(body)
    offset = HEADER.count("\n")
    return [d.start.row - offset for d in lint_source(source, select=[code])]


HELPER = """
def evaluate(model, batches):
    for x in batches:
        model(x.cuda(0))

def worker(rank, world_size):
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    torch.cuda.set_device(rank)
    model = DDP(torch.nn.Linear(4, 4).cuda(rank), device_ids=[rank])
    {call}

if __name__ == "__main__":
    mp.spawn(worker, args=(2,), nprocs=2)
"""


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        ("if rank == 0:\n        evaluate(model.module, [])", []),
        ("if dist.get_world_size() == 1:\n        evaluate(model.module, [])", []),
        ("evaluate(model.module, [])", [4]),
        ("if rank == 0:\n        evaluate(model.module, [])\n    evaluate(model, [])", [4]),
    ],
)
def test_ddp001_literal_in_a_function_called_only_by_one_process(call, expected):
    assert rows(HELPER.format(call=call), "DDP001") == expected


SWITCH = """
def setup(args):
    if {test}:
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    else:
        torch.cuda.set_device(args.local_rank)
        device = torch.device("cuda", args.local_rank)
        dist.init_process_group("nccl")
    return DDP(torch.nn.Linear(4, 4).to(device))
"""


@pytest.mark.parametrize(
    ("test", "expected"),
    [
        ("args.local_rank == -1 or args.no_cuda", []),
        ("args.no_cuda or args.local_rank == -1", []),
        ("args.local_rank == -1 or args.use_cpu", []),
        ("args.local_rank == -1 or args.debug", [4]),
        ("args.no_cuda or args.debug", [4]),
    ],
)
def test_ddp020_local_rank_unset_or_cpu_is_the_single_process_side(test, expected):
    assert rows(SWITCH.format(test=test), "DDP020") == expected


FAKE = """
def trace(world_size):
    dist.init_process_group({backend}, rank=0, world_size=world_size)
    return torch.nn.Linear(4, 4).to("cuda:0")
"""


@pytest.mark.parametrize(
    ("backend", "expected"),
    [('"fake"', []), ('backend="fake"', []), ('"nccl"', [4]), ('backend="nccl"', [4])],
)
def test_ddp001_a_fake_process_group_is_one_process(backend, expected):
    assert rows(FAKE.format(backend=backend), "DDP001") == expected


SAVE = """
class Runner:
    def __init__(self, network):
        self.network = network

    def save(self, filename):
        network = self.network.module
        return torch.save(network.state_dict(), filename)

def main():
    dist.init_process_group("nccl")
    runner = Runner(DDP(torch.nn.Linear(4, 4)))
    {use}
"""


@pytest.mark.parametrize(
    ("use", "expected"),
    [
        ("pass", []),
        ("runner.save('last.pt')", [13]),
        ("callbacks = [runner.save]", [8]),
    ],
)
def test_ddp013_a_method_nothing_calls_is_its_callers_to_judge(use, expected):
    source = HEADER + textwrap.dedent(SAVE.format(use=use))
    offset = HEADER.count("\n")
    found = lint_source(source, select=["DDP013"])
    assert [d.start.row - offset for d in found if not d.unproven] == expected

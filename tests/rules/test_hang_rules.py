"""The shared rank and collective concepts as the hang-class rules (DDP010) and DDP005 /
DDP013 see them: early exits, rank tests through attributes and decorators, mode checks,
helpers that issue a collective only sometimes."""

from __future__ import annotations

import textwrap

import pytest

from ddplint.api import lint_source

HEADER = """\
import functools
import os
import torch
import torch.distributed as dist
"""


def findings(body: str, code: str) -> list[tuple[int, str]]:
    """(row counted in `body`, message) of each finding of `code`."""
    offset = HEADER.count("\n")
    found = lint_source(HEADER + textwrap.dedent(body), select=[code])
    return [(d.start.row - offset, d.message) for d in found]


def rows(body: str, code: str) -> list[int]:
    return [row for row, _ in findings(body, code)]


def test_ddp010_after_early_return_names_the_ranks_that_reach_it():
    body = """\
    def save(rank, t):
        if rank != 0:
            return
        dist.barrier()
    """
    [(row, message)] = findings(body, "DDP010")
    assert row == 4
    assert "early exit on `rank != 0`, so only where it is false" in message


@pytest.mark.parametrize(
    "body",
    [
        # collectives before the early exit run on every rank
        "def f(t):\n    dist.all_reduce(t)\n    if dist.get_rank() > 0:\n        return\n"
        "    print(t)\n",
        # exits that are mode checks, not rank tests
        "def f(t, world_size):\n    if world_size == 1:\n        return t\n"
        "    dist.all_reduce(t)\n",
        "def f(t, args):\n    if not args.distributed:\n        return t\n    dist.all_reduce(t)\n",
        "def f(t, local_rank):\n    if local_rank == -1:\n        return\n    dist.barrier()\n",
        "def f(t, rank):\n    if rank is None:\n        return\n    dist.barrier()\n",
        # the disjunction is opened by the inner condition
        "def f(t, sharded, is_rank0):\n    if not sharded and not is_rank0:\n        return\n"
        "    if sharded:\n        dist.broadcast(t, src=0)\n",
        # the other ranks leave through a branch that issues the same collective
        "def f(t, rank):\n    if rank != 0:\n        dist.barrier()\n        return\n"
        "    dist.barrier()\n",
    ],
)
def test_ddp010_leaves_code_every_rank_reaches(body):
    assert rows(body, "DDP010") == []


def test_ddp010_rank_test_through_an_attribute_set_from_the_constructor_argument():
    body = """\
    class Trainer:
        def __init__(self, gpu_id):
            self.gpu_id = gpu_id

        def log(self, t):
            if self.gpu_id == 0:
                dist.all_reduce(t)

    def worker(rank):
        Trainer(rank).log(torch.ones(1))
    """
    assert rows(body, "DDP010") == [7]


def test_ddp010_main_only_decorator_gates_the_body():
    body = """\
    @rank_zero_only
    def log(t):
        dist.all_reduce(t)
    """
    [(row, message)] = findings(body, "DDP010")
    assert row == 3 and "decorated `@rank_zero_only`" in message


def test_ddp010_helper_that_issues_only_under_its_own_condition_is_not_a_collective():
    body = """\
    def embed(t, sharded):
        if sharded:
            dist.broadcast(t, src=0)
        return t

    def guarded(t):
        if dist.is_initialized():
            dist.barrier()

    def evaluate(t, sharded):
        if dist.get_rank() == 0:
            embed(t, sharded)
            guarded(t)
    """
    assert rows(body, "DDP010") == [13]


def test_ddp013_rank_attribute_and_decorator_guard_saves():
    body = """\
    @rank_zero_only
    def export(model):
        torch.save(model.state_dict(), "final.pt")

    class Trainer:
        def __init__(self, model, gpu_id):
            self.gpu_id = gpu_id
            self.is_master = gpu_id == 0
            self.model = model

        def fit(self, epochs):
            for epoch in range(epochs):
                if self.gpu_id == 0:
                    torch.save(self.model.state_dict(), "last.pt")
                if self.is_master:
                    torch.save(self.model.state_dict(), "copy.pt")
            export(self.model)
    """
    assert rows(body, "DDP013") == []


def test_ddp005_all_reduced_loss_divided_then_backpropagated():
    body = """\
    def step(model, x, optimizer):
        loss = model(x).mean()
        dist.all_reduce(loss)
        loss /= dist.get_world_size()
        loss.backward()
        optimizer.step()
    """
    assert rows(body, "DDP005") == [4]


def test_ddp005_leaves_metric_averaged_after_all_reduce():
    body = """\
    def step(model, x, optimizer):
        loss = model(x).mean()
        loss.backward()
        optimizer.step()
        shown = loss.detach().clone()
        dist.all_reduce(shown)
        shown /= dist.get_world_size()
        return shown.item()
    """
    assert rows(body, "DDP005") == []


@pytest.mark.parametrize(
    ("test", "call", "unproven"),
    [
        ("dist.get_rank() == 0", "tree_reduce(stats)", False),
        ("dist.get_rank(reduction_group) == 0", "tree_reduce(stats)", True),
        ("dist.get_rank() == 0", "tree_reduce(stats, tree_group)", True),
        ("dist.get_rank() == 0", 'tree_reduce(stats, mesh.get_group("tree"))', True),
    ],
)
def test_ddp010_when_group_membership_decides_the_finding_is_unproven(test, call, unproven):
    """The roots of one group may be exactly the members of the group the helper reduces
    over (a tree reduction across groups): the code does not show how the groups were
    built, so the hang is not proven."""
    body = f"""\
    def tree_reduce(stats, group=None):
        dist.all_reduce(stats, group=group)
        return stats

    def reduce_all(stats, reduction_group, tree_group, mesh):
        if {test}:
            stats = {call}
        return stats
    """
    source = HEADER + textwrap.dedent(body)
    [finding] = lint_source(source, select=["DDP010"])
    assert finding.unproven is unproven


STEP_TEST = """\
from torch.nn.parallel import DistributedDataParallel as DDP

def train(net, loader, optimizer, evaluate, total, start_step, val_freq):
    model = DDP(net)
    for i in range(len(loader)):
        x = next(loader)
        curr_step = start_step + i
        weight = 0.2 + 0.8 * curr_step / total
        out = model(x)
        loss = out.mean() * weight
        if torch.isnan(loss):
            for t in range(-3, 1):
                restart = ((curr_step - 1) // 200 + t) * 200
            start_step = restart - i
            continue
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if {test}:
            dist.all_reduce(out)
"""


def test_ddp010_a_counter_the_loss_is_weighted_by_is_the_same_on_every_rank():
    # `curr_step` feeds the loss, but only by arithmetic on the loop index, values from
    # outside the step and other counters: the test is no test on this rank's batch (the
    # restart under the NaN test is DDP011's and the others' concern, not this one's).
    assert rows(STEP_TEST.format(test="curr_step % val_freq == 0"), "DDP010") == []


def test_ddp010_a_test_on_the_step_result_still_differs_by_rank():
    assert rows(STEP_TEST.format(test="loss.item() > 1.0"), "DDP010") == [20]

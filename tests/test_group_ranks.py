"""A process's rank within a process group is a rank value for rank tests
(`dist.get_rank(group) == 0` picks the group's main process), and a function of another
project module that returns a rank test is one at its calls (fourth holdout set, V3:
dinov3's `if not distributed.is_subgroup_main_process(): return` before a save)."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from ddplint.context import FileContext
from ddplint.domain import Side, domain_of
from ddplint.project.summaries import summarize

HEADER = """
import numpy as np
import torch.distributed as dist
"""


def _side(test: str, prelude: str = "") -> Side | None:
    source = HEADER + textwrap.dedent(prelude) + f"\nflag = {test}\n"
    ctx = FileContext("t.py", source, cst.parse_module(source))
    statement = ctx.module.body[-1]
    assert isinstance(statement, cst.SimpleStatementLine)
    assign = statement.body[0]
    assert isinstance(assign, cst.Assign)
    return domain_of(ctx).ranks.side(assign.value)


@pytest.mark.parametrize(
    ("test", "side"),
    [
        ("dist.get_rank(group) == 0", Side.MAIN),
        ("dist.get_rank(group=pg) != 0", Side.OTHERS),
        ("dist.get_rank(self.dp_group) == 0", Side.MAIN),
        ("dist.get_rank(get_process_subgroup()) > 0", Side.OTHERS),
        ("dist.get_rank() == 0", Side.MAIN),
    ],
)
def test_rank_in_a_group_compared_with_zero_is_a_rank_test(test, side):
    assert _side(test) is side


@pytest.mark.parametrize(
    "test",
    [
        "np.linalg.matrix_rank(weights) == 0",
        "get_rank(step) == 0",
        "dist.get_rank(group, extra) == 0",
    ],
)
def test_a_rank_function_given_no_group_makes_no_rank_test(test):
    assert _side(test, "def get_rank(x):\n    return x\n") is None


def test_a_rank_in_a_group_held_by_a_name_is_followed():
    assert _side("in_group == 0", "in_group = dist.get_rank(group=pg)\n") is Side.MAIN


SUBGROUP_HELPERS = """
import torch.distributed as dist

def rank_in(group=None):
    return dist.get_rank(group) if dist.is_initialized() else 0

def leads_subgroup():
    return rank_in(group=current_subgroup()) == 0

def subgroups_enabled():
    return current_subgroup() is not None
"""


def test_a_module_summary_records_the_rank_test_its_functions_return():
    source = textwrap.dedent(SUBGROUP_HELPERS)
    summary = summarize(FileContext("comm.py", source, cst.parse_module(source)))
    returned = {name: f.returns_rank_test for name, f in summary.functions}
    assert returned.get("leads_subgroup") == Side.MAIN.value
    assert returned.get("subgroups_enabled", "") == ""
    assert returned.get("rank_in", "") == ""


def test_a_rank_test_returned_by_another_module_gates_a_save(cli, write):
    write("comm.py", SUBGROUP_HELPERS)
    main = write(
        "train.py",
        """
        import torch
        import torch.distributed as dist
        import comm

        def snapshot(model, step):
            if not comm.leads_subgroup():
                return
            torch.save(model.module.state_dict(), f"snap_{step}.pt")

        def stats(model, step):
            if not comm.subgroups_enabled():
                return
            torch.save(model.module.state_dict(), f"stats_{step}.pt")

        def train(model, steps):
            dist.init_process_group("nccl")
            for step in range(steps):
                snapshot(model, step)
                stats(model, step)
        """,
    )
    (main.parent / ".git").mkdir()
    result = cli("check", "--no-cache", "--select", "DDP013", "--output-format", "json", main)
    rows = [d["location"]["row"] for d in result.json()]
    lines = main.read_text().splitlines()
    assert rows == [lines.index("        stats(model, step)") + 1]

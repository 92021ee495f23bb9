"""`ddplint check --check-importers FILE`: a change to a helper module is checked where it
does harm, in the project files that import it, as `ddplint check .` reports it."""

from __future__ import annotations

HELPER = """\
import torch.distributed as dist


def log_metrics(metrics):
    dist.all_reduce(metrics)
    print(metrics)
"""
CALLER = """\
import torch.distributed as dist

from helpers.logs import log_metrics


def evaluate(metrics):
    if dist.get_rank() == 0:
        log_metrics(metrics)
"""
THROUGH = """\
import torch.distributed as dist

import evaluation


def main(metrics):
    dist.init_process_group("gloo")
    evaluation.evaluate(metrics)
"""
UNRELATED = """\
import torch.distributed as dist


def barrier():
    dist.barrier()
"""


def test_importers_are_checked_and_report_where_the_harm_lies(cli, write, monkeypatch, tmp_path):
    write("pyproject.toml", '[tool.ddplint]\nextend-select = ["DDP010"]\n')  # opt-in
    write("helpers/__init__.py", "")
    write("helpers/logs.py", HELPER)
    write("evaluation.py", CALLER)
    write("main.py", THROUGH)
    write("other.py", UNRELATED)
    monkeypatch.chdir(tmp_path)
    alone = cli("check", "--no-cache", "helpers/logs.py")
    assert alone.code == 0, alone.out
    whole = cli("check", "--no-cache", ".")
    found = cli("check", "--no-cache", "--check-importers", "helpers/logs.py")
    assert found.code == 1, found.out
    lines = [line for line in found.out.splitlines() if ": DDP" in line]
    assert [line.split(" ")[:2] for line in lines] == [["evaluation.py:8:9:", "DDP010"]]
    assert lines[0] in whole.out
    # main.py imports it through evaluation.py and is checked too; other.py is not.
    assert "3 files checked" in found.out

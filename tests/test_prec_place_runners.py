"""Which processes run a piece of code (`ddplint.domain.runners`), as the rules that assume
"every rank runs this" see it through the CLI: a helper whose only calls, in another module
of the project, run on rank 0 or in a one-process script is right to use GPU 0; one that
every rank calls is reported; one that nothing in sight calls is unproven (`--preview`)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import libcst
import pytest

SCORER = """\
import torch


def _features(net, batches):
    net.to("cuda:0")
    return [net(x.to("cuda:0")) for x in batches]


def score(net, batches):
    return sum(f.sum().item() for f in _features(net, batches))
"""

TRAIN = """\
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from scorer import score


def main(net, batches):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    net = DDP(net.cuda(), device_ids=[local_rank])
    {call}
"""


def _findings(cli, *args: object) -> list[tuple[str, int, bool]]:
    result = cli("check", "--no-cache", "--exit-zero", "--output-format", "json", *args)
    assert result.code == 0, result.err
    return [
        (Path(d["filename"]).name, d["location"]["row"], d["unproven"])
        for d in json.loads(result.out)
    ]


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        ("if dist.get_rank() == 0:\n        print(score(net.module, batches))", []),
        (
            "print(score(net.module, batches))",
            [("scorer.py", 6, False), ("scorer.py", 7, False)],
        ),
    ],
)
def test_helper_in_another_module_runs_where_its_callers_call_it(
    cli, write, tmp_path, monkeypatch, call, expected
):
    monkeypatch.chdir(tmp_path)
    write("pyproject.toml", "")
    write("scorer.py", "# scored in a distributed run\n" + SCORER)
    write("train.py", TRAIN.format(call=call))
    assert _findings(cli, "--select", "DDP001", ".") == expected


def test_helper_nothing_calls_is_unproven(cli, write, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write("pyproject.toml", "")
    write("scorer.py", "import torch.distributed as dist\n" + SCORER)
    assert _findings(cli, "--select", "DDP001", "scorer.py") == []
    found = _findings(cli, "--select", "DDP001", "--preview", "scorer.py")
    assert found == [("scorer.py", 6, True), ("scorer.py", 7, True)]


def test_else_of_two_distributed_switches_is_one_process(cli, write, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write("pyproject.toml", "")
    write(
        "train.py",
        """\
        import torch
        import torch.distributed as dist


        def main(batch, cfg, local_rank):
            dist.init_process_group("nccl")
            if cfg.enable_fsdp or cfg.enable_ddp:
                return batch.to(local_rank)
            return batch.to("cuda:0")
        """,
    )
    assert _findings(cli, "--select", "DDP001", "--preview", "train.py") == []


def test_each_calling_module_is_parsed_once(cli, write, tmp_path, monkeypatch):
    """The callers in other modules are read only for a finding that depends on them,
    and each calling module once per run however many findings ask."""
    monkeypatch.chdir(tmp_path)
    write("pyproject.toml", "")
    write("scorer.py", "# scored in a distributed run\n" + SCORER)
    train = write(
        "train.py",
        TRAIN.format(call="if dist.get_rank() == 0:\n        print(score(net.module, batches))"),
    )
    parsed: Counter[str] = Counter()
    real_parse = libcst.parse_module

    def parse(source: str, *args: object, **kwargs: object) -> libcst.Module:
        parsed[source] += 1
        return real_parse(source, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(libcst, "parse_module", parse)
    assert _findings(cli, "--select", "DDP001", "--jobs", "1", "scorer.py") == []
    # once for its summary (whether the project runs `scorer.py` distributed), once to
    # see where its call of `score` runs
    assert parsed[train.read_text()] <= 2

"""The single-process side of a distributed switch whose world size lives in another
module of the project: `if comm.size > 1: ... else: <one process>`, with `comm.size` set
from `dist.get_world_size()` by `comm.setup()`."""

from __future__ import annotations

import os

COMM = """\
import torch.distributed as dist

size = -1


def setup():
    global size
    if dist.is_torchelastic_launched():
        dist.init_process_group("nccl")
        size = dist.get_world_size()
    else:
        size = 1
"""

TRAIN = """\
import torch
import torch.distributed as dist

import comm


def device():
    comm.setup()
    if comm.size > 1:
        return torch.device("cuda", dist.get_rank() % torch.cuda.device_count())
    return torch.device("cuda:0")


def main(model):
    return model.to(device())
"""


def ddp001_lines(cli, path) -> list[int]:
    result = cli("check", "--exit-zero", "--select", "DDP001", "--output-format", "json", path)
    assert result.code == 0, result.err
    return [d["location"]["row"] for d in result.json()]


def test_world_size_global_of_a_sibling_makes_a_switch(cli, write, tmp_path, monkeypatch):
    """The `cuda:0` after `if comm.size > 1: return` runs in a job of one process; once
    `comm.size` no longer holds the world size (a cached result must follow), it is a
    hard-coded GPU of every rank again."""
    monkeypatch.chdir(tmp_path)
    write("pyproject.toml", "")
    comm = write("comm.py", COMM)
    train = write("train.py", TRAIN)
    assert ddp001_lines(cli, train) == []
    comm.write_text(COMM.replace("size = dist.get_world_size()", "size = read_size()"))
    assert ddp001_lines(cli, train) == [11]
    comm.write_text(COMM)
    assert ddp001_lines(cli, os.path.realpath(train)) == []


def test_an_attribute_of_a_local_object_is_not_a_world_size(cli, write, tmp_path, monkeypatch):
    """Only a project module's global is followed: `settings.size` of a local object is
    not a world size, so the `cuda:0` after the test stays a finding."""
    monkeypatch.chdir(tmp_path)
    write("pyproject.toml", "")
    write("comm.py", COMM)
    train = write(
        "train.py",
        TRAIN.replace("comm.size > 1", "settings.size > 1").replace(
            "    comm.setup()\n", "    comm.setup()\n    settings = load()\n"
        ),
    )
    assert ddp001_lines(cli, train) == [12]

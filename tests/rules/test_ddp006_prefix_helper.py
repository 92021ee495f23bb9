"""DDP006 and a project helper that cuts a prefix given by name from every key
(`key[len(prefix) + 1:]` with `prefix="module"`): the `module.` keys the trainer saves
round-trip, so the save is left alone; a helper for another prefix does not vouch for it."""

from __future__ import annotations

import json
from pathlib import Path

from ddplint.cli import main
from ddplint.project.queries import _MAY_STRIP_PREFIX

TRAIN = """\
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

import utils


def main(epochs=3):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    net = DistributedDataParallel(torch.nn.Linear(4, 1).cuda(), device_ids=[local_rank])
    for epoch in range(epochs):
        if dist.get_rank() == 0:
            torch.save({"state_dict": net.state_dict()}, "last.pth")
    return utils


if __name__ == "__main__":
    main()
"""
UTILS = """\
def drop_wrapper_prefix(state_dict, prefix="{prefix}"):
    return {{key[len(prefix) + 1:]: value for key, value in state_dict.items()}}
"""
EVALUATE = """\
import torch

import utils

net = torch.nn.Linear(4, 1)
net.load_state_dict(utils.drop_wrapper_prefix(torch.load("last.pth")["state_dict"]))
"""


def findings(tmp_path: Path, capsys, prefix: str) -> list[dict]:
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    (tmp_path / "train.py").write_text(TRAIN, encoding="utf-8")
    (tmp_path / "utils.py").write_text(UTILS.format(prefix=prefix), encoding="utf-8")
    (tmp_path / "evaluate.py").write_text(EVALUATE, encoding="utf-8")
    args = ["check", "--no-cache", "--exit-zero", "--output-format", "json", "--preview"]
    main([*args, "--select", "DDP006", str(tmp_path)])
    return json.loads(capsys.readouterr().out)


def test_a_helper_cutting_the_named_module_prefix_round_trips_the_keys(tmp_path, capsys):
    assert _MAY_STRIP_PREFIX.search(UTILS.format(prefix="module"))
    assert findings(tmp_path, capsys, "module") == []


def test_a_helper_for_another_prefix_does_not(tmp_path, capsys):
    (found,) = findings(tmp_path, capsys, "encoder")
    assert found["filename"].endswith("train.py") and found["code"] == "DDP006"

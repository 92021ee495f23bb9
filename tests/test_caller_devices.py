"""A library helper that uses the current CUDA device runs on the device its callers set:
DDP020 leaves it alone when a module calling into its module sets the device, and says it
again once none does, also from a cached run and when only the helper's file is passed."""

from __future__ import annotations

import os

COMM = """\
import torch
import torch.distributed as dist


def start_job():
    dist.init_process_group(backend="nccl")


def world_mean(value):
    tensor = torch.tensor([float(value)]).cuda()
    dist.all_reduce(tensor)
    return tensor.item()
"""

LAUNCHER = """\
import os

import torch

import comm


def setup():
    comm.start_job()
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
"""

TRAIN = """\
import torch
from torch.nn.parallel import DistributedDataParallel as DDP

import comm
import launcher


def main(model, batch):
    launcher.setup()
    model = DDP(model.cuda())
    loss = torch.nn.functional.mse_loss(model(batch.cuda()), batch.cuda())
    return comm.world_mean(loss.item())
"""


def findings(cli, *args: object) -> list[tuple[str, int, str]]:
    result = cli("check", "--exit-zero", "--output-format", "json", "--select", "DDP020", *args)
    assert result.code == 0, result.err
    return sorted(
        (os.path.realpath(d["filename"]), d["location"]["row"], d["code"]) for d in result.json()
    )


def test_callers_setting_the_device_decide_for_the_helper(cli, write, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write("pyproject.toml", "")
    comm = write("comm.py", COMM)
    launcher = write("launcher.py", LAUNCHER)
    write("train.py", TRAIN)
    assert findings(cli, comm) == []
    assert findings(cli, tmp_path) == []
    launcher.write_text(
        LAUNCHER.replace('    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))\n', "")
    )
    expected = [(os.path.realpath(comm), 10, "DDP020")]
    assert findings(cli, comm) == expected
    assert findings(cli, "--no-cache", tmp_path) == expected
    launcher.write_text(LAUNCHER)
    assert findings(cli, comm) == []


def test_a_helper_its_own_file_runs_is_not_left_to_callers(cli, write, tmp_path):
    """The file's own entry point reaches the helper: its device is this file's choice."""
    write("pyproject.toml", "")
    comm = write(
        "comm.py",
        COMM + '\n\nif __name__ == "__main__":\n    start_job()\n    world_mean(1.0)\n',
    )
    write("launcher.py", LAUNCHER)
    write("train.py", TRAIN)
    assert findings(cli, "--no-cache", comm) == [(os.path.realpath(comm), 10, "DDP020")]

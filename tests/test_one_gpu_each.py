"""A process asserted to see one GPU (`assert torch.cuda.device_count() == 1`, in the file
or in a project setup helper it calls) owns `cuda:0` and the default device: DDP001,
DDP020 and DDP033 stay silent there, and only there."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from ddplint.cli import main

SETUP = """\
import os

import torch
import torch.distributed as dist


def setup():
    {check}
    dist.init_process_group("nccl")
    return dist.get_rank()
"""

TRAIN = """\
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
{header}

def main():
    rank = setup()
    model = DDP(torch.nn.Linear(4, 4).to("cuda:0"), device_ids=[0])
    model(torch.randn(2, 4).cuda()).sum().backward()


if __name__ == "__main__":
    main()
"""

LOCAL_SETUP = """
def setup():
    {check}
    dist.init_process_group("nccl")
    return dist.get_rank()
"""


def _codes(tmp_path: Path, capsys, files: dict[str, str]) -> list[str]:
    (tmp_path / "pyproject.toml").write_text("")
    for name, text in files.items():
        (tmp_path / name).write_text(textwrap.dedent(text))
    capsys.readouterr()
    main(
        [
            "check",
            "--no-cache",
            "--output-format",
            "json",
            "--select",
            "DDP001,DDP020",
            str(tmp_path / "train.py"),
        ]
    )
    return sorted(f["code"] for f in json.loads(capsys.readouterr().out))


ONE = [
    "assert torch.cuda.device_count() == 1",
    "assert torch.cuda.device_count() <= 1",
    "assert torch.cuda.device_count() < 2",
]
SEVERAL = [
    "assert torch.cuda.device_count() >= 1",
    "assert torch.cuda.device_count() == 2",
    "if torch.cuda.device_count() == 1:\n        print('one GPU')",
    "if os.environ.get('STRICT_DEVICES') == '1':\n        assert torch.cuda.device_count() == 1",
]


@pytest.mark.parametrize("check", ONE)
def test_a_setup_helper_asserting_one_gpu_silences_the_hard_coded_index(tmp_path, capsys, check):
    files = {
        "dist_utils.py": SETUP.format(check=check),
        "train.py": TRAIN.format(header="from dist_utils import setup\n"),
    }
    assert _codes(tmp_path, capsys, files) == []


@pytest.mark.parametrize("check", ONE)
def test_the_assertion_in_the_file_itself_counts_too(tmp_path, capsys, check):
    files = {"train.py": TRAIN.format(header=LOCAL_SETUP.format(check=check))}
    assert _codes(tmp_path, capsys, files) == []


@pytest.mark.parametrize("check", SEVERAL)
def test_anything_short_of_one_gpu_keeps_the_findings(tmp_path, capsys, check):
    files = {
        "dist_utils.py": SETUP.format(check=check),
        "train.py": TRAIN.format(header="from dist_utils import setup\n"),
    }
    assert _codes(tmp_path, capsys, files) == ["DDP001", "DDP001"]


@pytest.mark.parametrize("check", SEVERAL)
def test_in_the_file_too_anything_short_of_one_gpu_keeps_the_findings(tmp_path, capsys, check):
    files = {"train.py": TRAIN.format(header=LOCAL_SETUP.format(check=check))}
    assert _codes(tmp_path, capsys, files) == ["DDP001", "DDP001", "DDP020"]

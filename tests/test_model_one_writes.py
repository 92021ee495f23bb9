"""Which file a call opens for writing (`ddplint.domain.opened_files`), as DDP050 sees it
through the CLI: a file manager's `open(path, "w")` truncates the file as the builtin does;
appending does not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ddplint.cli import main

TRAIN = """\
import argparse
import json
import os

import fsspec
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--output_dir", default="outputs")
    args = parser.parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = DDP(torch.nn.Linear(8, 2).cuda(local_rank), device_ids=[local_rank])
    data = TensorDataset(torch.randn(64, 8))
    loader = DataLoader(data, batch_size=8, sampler=DistributedSampler(data, shuffle=False))
    scores = {"sum": sum(model(x.cuda(local_rank)).sum().item() for (x,) in loader)}
    with fsspec.open(args.output_dir + "/scores.json", "w") as f:
        json.dump(scores, f)
    with fsspec.open(args.output_dir + "/history.jsonl", "a") as f:
        f.write(json.dumps(scores))
    with open(args.output_dir + "/final.json", "w") as f:
        json.dump(scores, f)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
"""


def test_a_file_managers_open_for_writing_counts_as_the_builtin_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "train.py").write_text(TRAIN)
    monkeypatch.chdir(tmp_path)
    main(["check", "--no-cache", "--select", "DDP050", "--output-format", "json", "train.py"])
    found = json.loads(capsys.readouterr().out)
    lines = sorted(f["location"]["row"] for f in found)
    assert lines == [23, 27]  # `fsspec.open(..., "w")` and `open(..., "w")`; not the append

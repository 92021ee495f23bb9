"""Files written with Windows line ends (`\r\n`) are read like any other: the project's
text scans anchor at line ends, and a CRLF file must not hide its epoch loop."""

from __future__ import annotations

import json
from pathlib import Path

from ddplint.cli import main
from ddplint.project_files import project_files

TRAIN = """\
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

from engine import Trainer


def prepare_data():
    data = TensorDataset(torch.randn(64, 4))
    sampler = DistributedSampler(data, shuffle=True)
    return DataLoader(data, batch_size=8, sampler=sampler)


def main():
    dist.init_process_group("gloo")
    loader = prepare_data()
    trainer = Trainer()
    for epoch in range(10):
        trainer.train_epoch(loader)


if __name__ == "__main__":
    main()
"""
ENGINE = """\
class Trainer:
    def train_epoch(self, loader):
        for (x,) in loader:
            x.sum()
"""


def test_project_text_reads_windows_line_ends_as_newlines(tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    script = tmp_path / "train.py"
    script.write_bytes(b"a = 1\r\nb = 2\rc = 3\n")
    assert project_files(str(tmp_path)).text(str(script)) == "a = 1\nb = 2\nc = 3\n"


def test_an_epoch_loop_in_a_crlf_file_is_named(tmp_path: Path, capsys):
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    for name, text in (("train.py", TRAIN), ("engine.py", ENGINE)):
        (tmp_path / name).write_bytes(text.replace("\n", "\r\n").encode("utf-8"))
    args = ["check", "--no-cache", "--exit-zero", "--output-format", "json", "--select", "DDP002"]
    main([*args, str(tmp_path / "train.py")])
    (found,) = json.loads(capsys.readouterr().out)
    assert "every pass over its loaders (the loop at `train.py:18`)" in found["message"]

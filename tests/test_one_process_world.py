"""A script its project launches only as a job of one process (`torchrun
--nproc_per_node=1 eval.py`, while `train.py` is launched on four) runs its distributed
code in one process: the findings whose harm needs several processes are unproven there,
the others stay proven (a shuffled order that repeats, a resume file a crash truncates)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ddplint.cli import main
from ddplint.domain import launch_commands
from ddplint.project_files import project_files

SCRIPT = """\
import os

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

dist.init_process_group("nccl")
head = torch.nn.Linear(8, 2).to("cuda:0")
if os.path.exists("probe.pt"):
    head.load_state_dict(torch.load("probe.pt", map_location="cpu"))
data = TensorDataset(torch.randn(64, 8), torch.randint(0, 2, (64,)))
loader = DataLoader(data, batch_size=8, sampler=DistributedSampler(data))
optimizer = torch.optim.SGD(head.parameters(), lr=0.1)
for epoch in range(10):
    for x, y in loader:
        loss = torch.nn.functional.cross_entropy(head(x.cuda()), y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    torch.save(head.state_dict(), "probe.pt")
"""


def _findings(tmp_path: Path, capsys, readme: str) -> dict[str, bool]:
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    (tmp_path / "eval.py").write_text(SCRIPT, encoding="utf-8")
    (tmp_path / "train.py").write_text(SCRIPT, encoding="utf-8")
    (tmp_path / "README.md").write_text(readme, encoding="utf-8")
    project_files.cache_clear()
    launch_commands._commands.cache_clear()
    args = ["check", "--no-cache", "--exit-zero", "--preview", "--output-format", "json"]
    main([*args, "--select", "DDP001,DDP002,DDP014", str(tmp_path / "eval.py")])
    return {f["code"]: f["unproven"] for f in json.loads(capsys.readouterr().out)}


@pytest.mark.parametrize(
    ("readme", "shared_gpu_unproven"),
    [
        ("torchrun --nproc_per_node=1 eval.py\ntorchrun --nproc_per_node=4 train.py\n", True),
        ("torchrun --nproc_per_node=4 eval.py\n", False),
        ("torchrun --nproc_per_node=1 eval.py\n", False),  # a template: the user sets N
    ],
)
def test_only_harms_of_several_processes_wait_for_a_launch_of_several(
    tmp_path, capsys, readme, shared_gpu_unproven
):
    found = _findings(tmp_path, capsys, readme)
    assert found == {"DDP001": shared_gpu_unproven, "DDP002": False, "DDP014": False}

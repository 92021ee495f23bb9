"""Checkpoints that break resume, through the CLI on small projects: a saving helper of
another module rewriting the file the script resumes from (DDP014), a resume that restores
the model but not the optimizer (DDP036), and a loading helper of another module without
`map_location` (DDP033)."""

from __future__ import annotations

import pytest

CKPT = """\
import os
import shutil

import torch


def save_checkpoint(state, is_best, out_dir, filename="checkpoint.pth"):
    path = os.path.join(out_dir, filename)
    torch.save(state, path)
    if is_best:
        shutil.copyfile(path, os.path.join(out_dir, "model_best.pth"))


def load_checkpoint(path, model, optimizer):
    state = torch.load(path, map_location="cpu")
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    return state["epoch"] + 1


def read_state(path, map_location=None):
    return torch.load(path, map_location=map_location)
"""

TRAIN = """\
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

import ckpt


def main(net, loader, out, epochs):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = DDP(net.cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    start = 0
    {resume}
    for epoch in range(start, epochs):
        for x, y in loader:
            loss = torch.nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            state = {{"model": model.module.state_dict(), "optimizer": optimizer.state_dict()}}
            ckpt.save_checkpoint({{**state, "epoch": epoch}}, {is_best}, out)


if __name__ == "__main__":
    main(None, [], "out", 10)
"""

RESUME = (
    'if os.path.exists(os.path.join(out, "checkpoint.pth")):\n'
    '        start = ckpt.load_checkpoint(os.path.join(out, "checkpoint.pth"), model.module, '
    "optimizer)"
)


def findings(cli, path, *extra: str) -> list[tuple[int, str, bool]]:
    result = cli("check", "--exit-zero", "--output-format", "json", *extra, path)
    assert result.code == 0, result.err
    rows = result.json()
    return sorted((d["location"]["row"], d["code"], d.get("unproven", False)) for d in rows)


def line_of(path, text: str) -> int:
    """The 1-based line of the first occurrence of `text` in the file at `path`."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


@pytest.fixture
def project(write, tmp_path):
    write("pyproject.toml", "[project]\nname = 'demo'\n")
    write("ckpt.py", CKPT)
    return tmp_path


def test_helper_rewriting_the_resume_file_is_proven_at_the_call(cli, write, project):
    train = write("train.py", TRAIN.format(resume=RESUME, is_best="epoch % 5 == 0"))
    row = line_of(train, "ckpt.save_checkpoint")
    assert findings(cli, train, "--select", "DDP014") == [(row, "DDP014", False)]


def test_helper_write_nothing_resumes_from_is_unproven(cli, write, project):
    train = write("train.py", TRAIN.format(resume="pass", is_best="False"))
    assert findings(cli, train, "--select", "DDP014") == []
    row = line_of(train, "ckpt.save_checkpoint")
    assert findings(cli, train, "--select", "DDP014", "--preview") == [(row, "DDP014", True)]


def test_helper_writing_through_a_temporary_file_is_silent(cli, write, project):
    write(
        "ckpt.py",
        CKPT.replace(
            "    torch.save(state, path)\n",
            "    torch.save(state, path + '.tmp')\n    os.replace(path + '.tmp', path)\n",
        ).replace("shutil.copyfile(path, ", "shutil.copy2(path, 'x.tmp') or os.replace('x.tmp', "),
    )
    train = write("train.py", TRAIN.format(resume=RESUME, is_best="True"))
    assert findings(cli, train, "--select", "DDP014", "--preview") == []


RESUME_MODEL_ONLY = """\
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

import ckpt


def main(net, loader, out, epochs):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = DDP(net.cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.{optimizer}
    start = 0
    if os.path.exists(out):
        state = torch.load(out, map_location="cpu")
        model.module.load_state_dict(state["model"])
        start = state["epoch"] + 1
        {restore}
    for epoch in range(start, epochs):
        for x, y in loader:
            loss = torch.nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            torch.save({{"model": model.module.state_dict(), "epoch": epoch}}, out + ".tmp")
            os.replace(out + ".tmp", out)


if __name__ == "__main__":
    main(None, [], "out.pth", 10)
"""


@pytest.mark.parametrize(
    ("optimizer", "restore", "expected"),
    [
        ("Adam(model.parameters())", "pass", [(18, "DDP036", False)]),
        ("SGD(model.parameters(), lr=0.1, momentum=0.9)", "pass", [(18, "DDP036", False)]),
        ("SGD(model.parameters(), lr=0.1)", "pass", []),
        ("Adam(model.parameters())", "ckpt.restore_optimizer(optimizer, state)", []),
    ],
)
def test_resume_without_optimizer_state(cli, write, project, optimizer, restore, expected):
    train = write("train.py", RESUME_MODEL_ONLY.format(optimizer=optimizer, restore=restore))
    assert findings(cli, train, "--select", "DDP036", "--preview") == expected


LOADS = """\
import os

import torch
import torch.distributed as dist

import ckpt


def main(model, path):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    state = ckpt.read_state(path{passed})
    model.load_state_dict(state)


if __name__ == "__main__":
    main(None, "weights.pth")
"""


@pytest.mark.parametrize(
    ("passed", "expected"),
    [("", [(13, "DDP033", True)]), (", map_location='cpu'", []), (", 'cpu'", [])],
)
def test_loading_helper_without_map_location(cli, write, project, passed, expected):
    train = write("train.py", LOADS.format(passed=passed))
    assert findings(cli, train, "--select", "DDP033", "--preview") == expected


def test_resume_judged_by_the_optimizers_of_its_own_function(cli, write, project):
    """An Adam of another function (a probe trained elsewhere in the file) says nothing
    about the plain-SGD resume."""
    source = RESUME_MODEL_ONLY.format(optimizer="SGD(model.parameters(), lr=0.1)", restore="pass")
    source += "\n\ndef probe(head):\n    return torch.optim.Adam(head.parameters())\n"
    train = write("train.py", source)
    assert findings(cli, train, "--select", "DDP036", "--preview") == []


COPY_INTO_FOLDER = """\
import os
import shutil

import torch
import torch.distributed as dist


def save(state, out, backup, epoch):
    path = os.path.join(out, f"ep{epoch}.pth")
    torch.save(state, path)
    shutil.copy(path, backup)
    shutil.copy(path, os.path.join(out, "current.pth"))


def main(model, epochs, out):
    dist.init_process_group("nccl")
    if os.path.exists(os.path.join(out, "current.pth")):
        model.load_state_dict(torch.load(os.path.join(out, "current.pth"), map_location="cpu"))
    for epoch in range(epochs):
        if dist.get_rank() == 0:
            save(model.state_dict(), out, "backup", epoch)


if __name__ == "__main__":
    main(None, 3, "out")
"""


def test_copy_onto_the_resume_file_not_into_a_folder(cli, write, project):
    train = write("train.py", COPY_INTO_FOLDER)
    row = line_of(train, '"current.pth"))')
    assert findings(cli, train, "--select", "DDP014", "--preview") == [(row, "DDP014", True)]


def test_an_epoch_read_into_a_name_nothing_reads_starts_no_resume(cli, write, project):
    """`epoch = state["epoch"]` in an evaluation that only loads the weights: the counter
    starts no loop, so the load is no resume (and its optimizer no concern)."""
    source = RESUME_MODEL_ONLY.format(optimizer="Adam(model.parameters())", restore="pass")
    source = source.replace(
        '        start = state["epoch"] + 1\n',
        '        epoch = state["epoch"]\n',
    )
    source = source.replace("for epoch in range", "for step in range").replace(
        '"epoch": epoch}', '"epoch": step}'
    )
    train = write("train.py", source)
    assert findings(cli, train, "--select", "DDP036", "--preview") == []

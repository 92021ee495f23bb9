"""The resume file rewritten in place, through the CLI on small projects: a saving helper
whose file name is passed by the caller (and defaults to a fresh per-epoch name), the
resume read in a helper of another module, a helper that hands the file to another
function of its module, a run folder named by the start time (DDP014)."""

from __future__ import annotations

import pytest
from test_recall_ckpt_resume import findings

IO = """\
import os

import torch


def save_checkpoint(checkpoint_dir, model, optimizer, epoch, filename=None):
    if filename is None:
        filename = f"checkpoint_{epoch:04d}.pth"
    state = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch}
    torch.save(state, os.path.join(checkpoint_dir, filename))


def resume_if_possible(checkpoint_dir, model, optimizer):
    last = os.path.join(checkpoint_dir, "{resumed}")
    if not os.path.isfile(last):
        return -1
    state = torch.load(last, map_location="cpu")
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    return state["epoch"]


class Saver:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer

    def write(self, path):
        torch.save({"model": self.model.state_dict()}, path)

    def save_resume_point(self, out):
        self.write(os.path.join(out, "checkpoint.pth"))

    def save_snapshot(self, out, step):
        self.write(os.path.join(out, f"step_{step}.pth"))
"""

TRAIN = """\
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from ckpt_io import Saver, resume_if_possible, save_checkpoint


def main(net, loader, out, epochs):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = DDP(net.cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters())
    saver = Saver(model.module, optimizer)
    start = resume_if_possible(out, model.module, optimizer) + 1
    for epoch in range(start, epochs):
        for x, y in loader:
            loss = torch.nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            {save}


if __name__ == "__main__":
    main(None, [], "out", 10)
"""


SAVE_ROW = 25


@pytest.mark.parametrize(
    ("resumed", "save", "expected"),
    [
        # The resume helper reads the very file the loop rewrites: proven.
        (
            "checkpoint.pth",
            'save_checkpoint(out, model.module, optimizer, epoch, filename="checkpoint.pth")',
            [(SAVE_ROW, "DDP014", False)],
        ),
        # `filename` left out: a fresh `checkpoint_0003.pth` per epoch.
        ("checkpoint.pth", "save_checkpoint(out, model.module, optimizer, epoch)", []),
        # Another file than the one resumed from: shown only under --preview.
        (
            "resume.pth",
            'save_checkpoint(out, model.module, optimizer, epoch, filename="checkpoint.pth")',
            [(SAVE_ROW, "DDP014", True)],
        ),
        # A method naming the file and handing it to the writer of its class.
        ("checkpoint.pth", "saver.save_resume_point(out)", [(SAVE_ROW, "DDP014", False)]),
        ("checkpoint.pth", "saver.save_snapshot(out, epoch)", []),
    ],
)
def test_resume_file_rewritten_through_helpers(cli, write, tmp_path, resumed, save, expected):
    write("pyproject.toml", "[project]\nname = 'demo'\n")
    write("ckpt_io.py", IO.replace("{resumed}", resumed))
    train = write("train.py", TRAIN.format(save=save))
    assert train.read_text().splitlines()[SAVE_ROW - 1].strip() == save
    assert findings(cli, train, "--select", "DDP014", "--preview") == expected


STAMPED = """\
import datetime
import os

import torch
import torch.distributed as dist


def main(model, loader, out, name):
    dist.init_process_group("nccl")
    run_dir = os.path.join(out, name + datetime.datetime.now().strftime("-%H%M%S"))
    for epoch in range(10):
        for step, batch in enumerate(loader):
            if dist.get_rank() == 0 and step % 500 == 0:
                {save}


if __name__ == "__main__":
    main(None, [], "runs", "exp")
"""


@pytest.mark.parametrize(
    ("save", "expected"),
    [
        ('torch.save(model.state_dict(), os.path.join(run_dir, "checkpoint.ckpt"))', [14]),
        (
            "torch.save(model.state_dict(), os.path.join(run_dir, "
            'datetime.datetime.now().strftime("%H%M%S%f.ckpt")))',
            [],
        ),
    ],
)
def test_time_stamp_of_the_run_is_not_of_the_save(cli, write, tmp_path, save, expected):
    write("pyproject.toml", "[project]\nname = 'demo'\n")
    train = write("train.py", STAMPED.format(save=save))
    # nothing reads the file back: unproven, but a run folder stamped once is one file
    found = findings(cli, train, "--select", "DDP014", "--preview")
    assert [row for row, _, _ in found] == expected

"""Which calls read a checkpoint back (`resume_loads.READER`): a name whose word is a load
or resume verb (`torch.load`, `load_checkpoint`, `loadModel`, `resume_from`), not an
upload, a download or a data loader. DDP014 calls a file rewritten in place "the
checkpoint this script reads back" only on such a read; a resume from a path the user
gives is said as such."""

from __future__ import annotations

import libcst as cst
import pytest
from test_exit_before_rendezvous import project_output
from test_recall_ckpt_resume import findings

from ddplint.context import FileContext
from ddplint.domain.resume_loads import READER, resumes


@pytest.mark.parametrize(
    "name",
    ["load", "load_checkpoint", "loadModel", "LoadWeights", "reload_ckpt", "resume_from", "_load"],
)
def test_load_and_resume_verbs_read_back(name: str) -> None:
    assert READER.search(name)


@pytest.mark.parametrize(
    "name",
    ["upload_artifact", "download", "uploadFile", "DataLoader", "get_loader", "train_loader"],
)
def test_uploads_downloads_and_data_loaders_read_no_checkpoint(name: str) -> None:
    assert not READER.search(name)


BEST_MODEL_UPLOADED = """\
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def main(model, loader, val_loss_of, task, weights_dir, epochs):
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    model = DDP(model)
    best = float("inf")
    for epoch in range(epochs):
        for x, y in loader:
            model(x).sum().backward()
        loss = val_loss_of(model)
        if rank == 0 and loss < best:
            best = loss
            path = os.path.join(weights_dir, "best_model.pth")
            torch.save(model.module.state_dict(), path)
            task.upload_artifact("best_model.pth", artifact_object=path)
"""


def test_an_upload_of_the_best_weights_is_no_resume(cli, write) -> None:
    write("pyproject.toml", "[project]\nname = 'demo'\n")
    train = write("train.py", BEST_MODEL_UPLOADED)
    assert all(unproven for _, _, unproven in findings(cli, train, "--select", "DDP014"))


GIVEN_PATH = """\
import argparse
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def main(model, optimizer, loader, epochs):
    parser = argparse.ArgumentParser()
    parser.add_argument("--resume_from", default="")
    parser.add_argument("--out", default="runs")
    args = parser.parse_args()
    dist.init_process_group("nccl")
    model = DDP(model)
    start = 0
    if args.resume_from:
        state = torch.load(args.resume_from, map_location="cpu")
        model.module.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        start = state["epoch"] + 1
    for epoch in range(start, epochs):
        for x, y in loader:
            model(x).sum().backward()
            optimizer.step()
        if dist.get_rank() == 0:
            state = {"model": model.module.state_dict(), "optimizer": optimizer.state_dict()}
            state["epoch"] = epoch
            torch.save(state, os.path.join(args.out, "last.ckpt"))
"""


def test_a_resume_from_a_given_path_is_said_as_such(cli, write) -> None:
    out = project_output(cli, write, GIVEN_PATH, "DDP014")
    assert "a checkpoint of the kind this script resumes from, given its path" in out
    assert "`args.resume_from`" in out
    assert "reads back" not in out


def test_another_runs_weights_are_no_resume(cli, write) -> None:
    write("pyproject.toml", "[project]\nname = 'demo'\n")
    teacher = GIVEN_PATH.replace("resume_from", "resume_teacher")
    train = write("train.py", teacher)
    assert all(unproven for _, _, unproven in findings(cli, train, "--select", "DDP014"))


LOOP_ELSEWHERE = """\
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from engine import train_one_epoch


def train(model, loader, args):
    dist.init_process_group("nccl")
    model = DDP(model)
    optimizer = torch.optim.Adam(model.parameters())
    best_path = os.path.join(args.log_dir, "best.ckpt")
    best = float("inf")
    if args.resume:
        best = torch.load(best_path, map_location="cpu")["loss"]
    for epoch in range(args.epochs):
        loss = train_one_epoch(model, loader, optimizer)
        if dist.get_rank() == 0 and loss < best:
            best = loss
            torch.save({"model": model.state_dict(), "loss": loss}, best_path)
"""


def test_a_load_where_training_is_set_up_reads_back(cli, write) -> None:
    """The function builds the optimizer of a loop another module runs: a load there is
    the resume's, and the file it reads back is the one every save rewrites."""
    write("pyproject.toml", "[project]\nname = 'demo'\n")
    write("engine.py", "def train_one_epoch(model, loader, optimizer):\n    return 0.0\n")
    out = project_output(cli, write, LOOP_ELSEWHERE, "DDP014")
    assert "the checkpoint this script reads back to resume from" in out


FINAL_TEST = """\
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


class Trainer:
    def __init__(self, model, loader, out):
        self.model = DDP(model)
        self.loader = loader
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.out = out

    def save_model(self, path):
        torch.save(self.model.module.state_dict(), path)

    def load_model(self, path):
        self.model.module.load_state_dict(torch.load(path, map_location="cpu"))

    def train(self):
        for x in self.loader:
            self.model(x).sum().backward()
            self.optimizer.step()

    def process(self, epochs):
        best_path = os.path.join(self.out, "best_model.pth")
        {resume}
        for epoch in range(epochs):
            self.train()
            if dist.get_rank() == 0:
                self.save_model(best_path)
        self.load_model(best_path)
"""


@pytest.mark.parametrize(
    ("resume", "read_back"),
    [("pass", False), ("self.load_model(best_path)", True)],
    ids=["final test only", "also on resume"],
)
def test_a_loading_method_called_after_training_only_resumes_nothing(
    cli, write, resume: str, read_back: bool
) -> None:
    """A method of a training class that loads a file resumes from it only where a call
    of it continues training: called once after the last epoch (the best weights for a
    final test, DiffSR), it reads nothing back to resume."""
    out = project_output(cli, write, FINAL_TEST.format(resume=resume), "DDP014")
    assert ("reads back to resume from" in out) is read_back


PRETRAINED_THEN_RESUME = """\
import torch


def build(args, model, optimizer):
    if args.pretrained:
        checkpoint = torch.load(args.pretrained, map_location="cpu")
        model.load_state_dict(checkpoint["state_dict"], strict=False)
    start_epoch = 0
    if args.checkpoint:
        checkpoint = torch.load(args.checkpoint, map_location="cpu")
        start_epoch = checkpoint["epoch"]
        model.load_state_dict(checkpoint["state_dict"])
        optimizer.load_state_dict(checkpoint["optimizer"])
    return start_epoch
"""


def test_a_resume_is_the_load_whose_value_the_restores_read() -> None:
    ctx = FileContext("train.py", PRETRAINED_THEN_RESUME, cst.parse_module(PRETRAINED_THEN_RESUME))
    found = [ctx.code(r.load.args[0].value) for r in resumes(ctx)]
    # the pretrained weights' load binds the same name, but the epoch and the optimizer
    # read the later load's value
    assert found == ["args.checkpoint"]

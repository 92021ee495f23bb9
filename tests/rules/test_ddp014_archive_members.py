"""DDP014 and a checkpoint written as members of an archive the trainer opens anew for each
save (`with Checkpoint(f"state-{step}.ckpt", "w") as ckpt:` then `ckpt.open("net.pth",
"w")`, or a zip file kept on `self`): no file on disk is rewritten in place. A plain
`open(path, "wb")` of a fixed path still is."""

from __future__ import annotations

from ddplint.api import lint_source

TRAINER = """\
import zipfile

import torch
import torch.distributed as dist


class Checkpoint:
    def __init__(self, path, mode="r"):
        self._zip = None
        self._zip = zipfile.ZipFile(path, mode)

    def write_model(self, net):
        with self._zip.open("net_state.pth", "w") as f:
            torch.save(net.state_dict(), f)

    def open(self, name, mode="r"):
        return self._zip.open(name, mode)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._zip.close()


def train(net, optimizer, loader, run_dir):
    for step, (x, y) in enumerate(loader):
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(net(x), y).backward()
        optimizer.step()
        if step % 1000 == 0 and dist.get_rank() == 0:
            {save}
"""
ARCHIVE = """with Checkpoint(f"{run_dir}/state-{step:09d}.ckpt", "w") as checkpoint:
                checkpoint.write_model(net)
                with checkpoint.open("optimizer_state.pth", "w") as f:
                    torch.save(optimizer.state_dict(), f)"""
PLAIN = """with open(f"{run_dir}/optimizer_state.pth", "wb") as f:
                torch.save(optimizer.state_dict(), f)"""


def findings(save: str) -> list:
    return lint_source(TRAINER.format(save=save), select=["DDP014"])


def test_members_of_an_archive_written_anew_are_left_alone():
    assert findings(ARCHIVE) == []


def test_a_fixed_file_opened_for_writing_is_still_reported():
    [finding] = findings(PLAIN)
    assert finding.code == "DDP014"

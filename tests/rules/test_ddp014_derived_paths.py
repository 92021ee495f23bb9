"""DDP014 on a weights file whose path is cut from the checkpoint's (`path.split(".pth.tar")
[0] + "_model.pth.tar"`): a file of its own, not the one the script resumes from, and,
where each call passes its own tag, a new file at every save."""

from __future__ import annotations

from ddplint.api import lint_source

WORKSPACE = """\
import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


class Workspace:
    def __init__(self, cfg, net, local_rank):
        dist.init_process_group("nccl")
        self.output_dir = cfg.output_dir
        self.model = DDP(net.cuda(), device_ids=[local_rank])
        self.optimizer = torch.optim.AdamW(self.model.parameters())
        if cfg.resume and os.path.exists(self.checkpoint_path()):
            self.load_checkpoint(self.checkpoint_path())

    def checkpoint_path(self, tag="latest"):
        return os.path.join(self.output_dir, f"{tag}.pth.tar")

    def run(self, loader, epochs):
        for epoch in range(epochs):
            for x, y in loader:
                loss = torch.nn.functional.mse_loss(self.model(x), y)
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
            if dist.get_rank() == 0:
                self.save_weights(tag=f"epoch{epoch}")
                self.save_checkpoint(tag="latest")

    def save_checkpoint(self, path=None, tag="latest"):
        if path is None:
            path = os.path.join(self.output_dir, f"{tag}.pth.tar")
        state = {"model": self.model.module.state_dict(), "optim": self.optimizer.state_dict()}
        torch.save(state, path)

    def save_weights(self, path=None, tag="latest"):
        if path is None:
            path = os.path.join(self.output_dir, f"{tag}.pth.tar")
        weights_path = path.split(".pth.tar")[0] + "_model.pth.tar"
        torch.save({"model": self.model.module.state_dict()}, weights_path)

    def load_checkpoint(self, path):
        state = torch.load(path, map_location="cpu")
        self.model.module.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optim"])
"""


def test_only_the_resume_file_is_reported():
    found = lint_source(WORKSPACE, select=["DDP014"])
    assert [(d.start.row, d.unproven) for d in found] == [(34, False)]
    assert "the checkpoint this script reads back to resume from" in found[0].message

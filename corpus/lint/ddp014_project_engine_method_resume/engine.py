"""A training engine: its public savers name the file and hand it to one private writer."""

import os.path as osp

import torch


class Engine:
    def __init__(self, local_rank, model, optimizer):
        self.local_rank = local_rank
        self.model = model
        self.optimizer = optimizer
        self.iteration = 0

    def save_checkpoint(self, path):
        if self.local_rank > 0:
            return
        state = {
            "model": self.model.module.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "iteration": self.iteration,
        }
        torch.save(state, path)  # expect-preview: DDP059

    def save_resume_point(self, snapshot_dir):
        self.save_checkpoint(osp.join(snapshot_dir, "checkpoint.pth"))

    def save_snapshot(self, snapshot_dir):
        self.save_checkpoint(osp.join(snapshot_dir, f"iter-{self.iteration}.pth"))

    def load_checkpoint(self, path):
        loaded = torch.load(path, map_location="cpu")
        self.model.module.load_state_dict(loaded["model"])
        self.optimizer.load_state_dict(loaded["optimizer"])
        self.iteration = loaded["iteration"]

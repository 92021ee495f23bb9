"""A checkpoint manager: `save` writes `checkpoint.pth.tar` (the file `resume` reads)
unless the caller names a file of its own."""
import os

import torch


def write_state(state, folder=".", filename=None):
    if filename is None:
        filename = os.path.join(folder, "checkpoint.pth.tar")
    torch.save(state, filename)


class CheckpointManager:
    def __init__(self, folder):
        self.folder = folder
        os.makedirs(folder, exist_ok=True)

    def save(self, epoch, model, optimizer, filename=None):
        state = {"epoch": epoch, "model": model.state_dict(), "optimizer": optimizer.state_dict()}
        if filename is None:
            write_state(state, folder=self.folder)
        else:
            write_state(state, filename=os.path.join(self.folder, filename))

    def resume(self, model, optimizer):
        path = os.path.join(self.folder, "checkpoint.pth.tar")
        if not os.path.isfile(path):
            return 0
        state = torch.load(path, map_location="cpu")
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        return state["epoch"]

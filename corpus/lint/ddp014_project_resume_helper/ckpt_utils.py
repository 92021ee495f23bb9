"""Checkpoint helpers shared by the training scripts."""
import os
import shutil

import torch


def save_checkpoint(state, is_best, out_dir, filename="checkpoint.pth"):
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, filename)
    torch.save(state, path)
    if is_best:
        shutil.copyfile(path, os.path.join(out_dir, "model_best.pth"))


def save_snapshot(state, path):
    tmp = path + ".tmp"
    torch.save(state, tmp)
    os.replace(tmp, path)


def save_epoch(state, out_dir, epoch):
    torch.save(state, os.path.join(out_dir, f"epoch_{epoch:03d}.pth"))


def load_checkpoint(path, model, optimizer):
    state = torch.load(path, map_location="cpu")
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    return state["epoch"] + 1

"""Checkpoint helpers: every epoch's `checkpoint.pth` and the resume from it."""

import os

import torch
import torch.distributed as dist


def is_primary():
    return not dist.is_initialized() or dist.get_rank() == 0


def save_checkpoint(checkpoint_dir, model_no_ddp, optimizer, epoch, best_metrics, filename=None):
    if not is_primary():
        return
    if filename is None:
        filename = f"checkpoint_{epoch:04d}.pth"
    state = {
        "model": model_no_ddp.state_dict(),
        "optimizer": optimizer.state_dict(),
        "epoch": epoch,
        "best_metrics": best_metrics,
    }
    torch.save(state, os.path.join(checkpoint_dir, filename))


def resume_if_possible(checkpoint_dir, model_no_ddp, optimizer):
    """The epoch of `checkpoint.pth` in `checkpoint_dir` restored, or -1."""
    last_checkpoint = os.path.join(checkpoint_dir, "checkpoint.pth")
    if not os.path.isfile(last_checkpoint):
        return -1, {}
    state = torch.load(last_checkpoint, map_location=torch.device("cpu"))
    model_no_ddp.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    return state["epoch"], state["best_metrics"]


def load_weights(path, model):
    model.load_state_dict(torch.load(path, map_location="cpu")["model"])

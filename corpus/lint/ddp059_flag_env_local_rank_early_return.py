"""A save helper leaves every process but the node's first (`LOCAL_RANK != 0`), in a job
that reads its node count from Slurm: with two nodes two processes write each step's file."""
import os

import torch

NUM_NODES = int(os.environ.get("SLURM_NNODES", "1"))


def save_last(model, optimizer, step, folder):
    if int(os.environ["LOCAL_RANK"]) != 0:
        return
    state = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": step}
    torch.save(state, os.path.join(folder, f"step_{step:08d}.pt"))  # expect: DDP059

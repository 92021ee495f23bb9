"""The save is guarded by the local rank and the global rank together: only the first
process of the first node passes both tests."""
import argparse
import os

import torch
import torch.distributed as dist


def save(model, epoch):
    parser = argparse.ArgumentParser()
    parser.add_argument("--nnodes", type=int, default=2)
    parser.parse_known_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    if local_rank == 0:
        if dist.get_rank() == 0:
            torch.save(model.state_dict(), f"model_{epoch}.pt")

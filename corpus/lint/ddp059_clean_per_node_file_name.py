"""Each node's first process writes a file named for its machine (node-local scratch
statistics): no two processes write the same path."""
import os
import socket

import torch

NUM_NODES = int(os.environ.get("SLURM_NNODES", "1"))


def dump_cache_stats(stats, folder):
    if int(os.environ["LOCAL_RANK"]) == 0:
        torch.save(stats, os.path.join(folder, f"cache_{socket.gethostname()}.pt"))

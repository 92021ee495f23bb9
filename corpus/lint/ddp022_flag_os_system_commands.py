"""Runs the benchmark matrix.

Historically this used `python -m torch.distributed.launch`; the commands below still do.
"""
import os

import torch.distributed as dist

BASE = "python -m torch.distributed.launch --use_env --nproc_per_node=8 bench.py"  # expect: DDP022


def run_all(batch_sizes, nodes):
    for bs in batch_sizes:
        status = os.system(f"{BASE} --batch-size {bs}")
        if status != 0:
            print(f"batch size {bs} failed with status {status}")
    for n in nodes:
        os.system(
            f"python -m torch.distributed.launch --nnodes={n} --nproc_per_node=8 bench.py"  # expect: DDP022
        )


def is_available():
    return dist.is_available() and dist.is_nccl_available()


if __name__ == "__main__":
    if is_available():
        run_all([32, 64, 128, 256], [1, 2])
    else:
        print("NCCL is not available on this machine")

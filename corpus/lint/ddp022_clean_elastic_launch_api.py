"""Runs a training function on every local GPU through torchrun's programmatic API.

`torch.distributed.launcher.api` is what `torchrun` itself uses; it is not the deprecated
`torch.distributed.launch` module, whose name it only shares a prefix with.
"""
import os

import torch
import torch.distributed as dist
from torch.distributed.launcher.api import LaunchConfig, elastic_launch


def train(steps):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    weight = torch.zeros(8, device="cuda")
    for _ in range(steps):
        dist.all_reduce(weight)
    dist.destroy_process_group()
    return local_rank


def run(nproc, steps=10):
    config = LaunchConfig(
        min_nodes=1,
        max_nodes=1,
        nproc_per_node=nproc,
        rdzv_backend="c10d",
        rdzv_endpoint="localhost:0",
        run_id="local",
        max_restarts=0,
    )
    return elastic_launch(config, train)(steps)


if __name__ == "__main__":
    print(run(torch.cuda.device_count()))

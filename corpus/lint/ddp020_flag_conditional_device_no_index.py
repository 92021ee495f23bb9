"""The same trainer without a per-rank choice: every conditional expression names the
bare "cuda", so under NCCL every rank lands on GPU 0."""

import os

import torch
import torch.distributed as dist


def main():
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    if world_size > 1:
        dist.init_process_group("nccl", rank=local_rank, world_size=world_size)
    use_gpu = torch.cuda.is_available()
    device = torch.device("cuda" if use_gpu else "cpu")  # expect: DDP020
    policy = torch.nn.Linear(16, 4).to(device)
    return policy

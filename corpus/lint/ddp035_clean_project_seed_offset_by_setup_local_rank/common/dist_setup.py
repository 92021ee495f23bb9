"""Process-group set-up for torchrun and Slurm launches; returns this process's GPU index."""
import os

import torch
import torch.distributed as dist


def init_distributed(backend="nccl"):
    gpus = torch.cuda.device_count()
    if "SLURM_PROCID" in os.environ:
        rank = int(os.environ["SLURM_PROCID"])
        world_size = int(os.environ["SLURM_NTASKS"])
        os.environ.setdefault("MASTER_PORT", "29500")
    else:
        rank = int(os.environ["RANK"])
        world_size = int(os.environ["WORLD_SIZE"])
    torch.cuda.set_device(rank % gpus)
    dist.init_process_group(backend=backend, world_size=world_size, rank=rank)
    return rank % gpus

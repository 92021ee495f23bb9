"""Process-group setup for jobs started by torchrun or srun, one process per GPU."""
import os

import torch
import torch.distributed as dist


def init_distributed():
    assert torch.cuda.device_count() >= 1, "this job needs GPUs"
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29500")
    rank = int(os.environ.get("RANK", os.environ.get("SLURM_PROCID", 0)))
    world_size = int(os.environ.get("WORLD_SIZE", os.environ.get("SLURM_NTASKS", 1)))
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    return rank, world_size


def is_main():
    return dist.get_rank() == 0

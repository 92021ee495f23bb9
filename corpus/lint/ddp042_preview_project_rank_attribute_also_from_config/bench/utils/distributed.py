"""Joins the job the launcher started, storing this process's rank on the object given."""
import os

import torch
import torch.distributed as dist


def setup_dist(holder):
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:
        holder.rank = int(os.environ["RANK"])
        holder.world_size = int(os.environ["WORLD_SIZE"])
        holder.gpu = int(os.environ["LOCAL_RANK"])
    elif "SLURM_PROCID" in os.environ:
        holder.rank = int(os.environ["SLURM_PROCID"])
        holder.world_size = int(os.environ["SLURM_NTASKS"])
        holder.gpu = holder.rank % torch.cuda.device_count()
    torch.cuda.set_device(holder.gpu)
    dist.init_process_group("nccl", rank=holder.rank, world_size=holder.world_size)

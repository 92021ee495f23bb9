"""Process-group setup: the local rank comes from whichever launcher variable is set."""
import os

import torch
import torch.distributed as dist


def _local_rank_from_env():
    for name in ("LOCAL_RANK", "SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK"):
        if name in os.environ:
            return int(os.environ[name])
    return 0


def init_distributed_device(args):
    args.local_rank = _local_rank_from_env()
    dist.init_process_group("nccl")
    torch.cuda.set_device(args.local_rank)
    return torch.device("cuda", args.local_rank)

"""Process-group setup for the vidclip training scripts (torchrun sets the variables)."""

import os

import torch
import torch.distributed as dist


def setup_distributed(args):
    if "RANK" not in os.environ:
        args.distributed = False
        return
    args.rank = int(os.environ["RANK"])
    args.world_size = int(os.environ["WORLD_SIZE"])
    args.gpu = int(os.environ["LOCAL_RANK"])
    args.distributed = True
    torch.cuda.set_device(args.gpu)
    dist.init_process_group("nccl", rank=args.rank, world_size=args.world_size)

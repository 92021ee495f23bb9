"""Process-group setup shared by the training scripts."""
import os

import torch
import torch.distributed as dist


def _from_environment(args):
    args.rank = int(os.environ["RANK"])
    args.world_size = int(os.environ["WORLD_SIZE"])
    args.local_rank = int(os.environ.get("LOCAL_RANK", "0"))


def init_distributed(args):
    _from_environment(args)
    torch.cuda.set_device(args.local_rank)
    dist.init_process_group("nccl", rank=args.rank, world_size=args.world_size)

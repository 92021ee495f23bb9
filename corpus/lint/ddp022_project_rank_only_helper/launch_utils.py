"""Process-group setup that takes the global rank from the environment only."""
import os

import torch.distributed as dist


def setup(args):
    args.rank = int(os.environ["RANK"])
    dist.init_process_group("nccl", rank=args.rank, world_size=int(os.environ["WORLD_SIZE"]))

"""Process setup shared by the tools: the GPU of this process, then the process group."""
import os

import torch
import torch.distributed as dist


def default_setup(args):
    args.local_rank = int(os.environ.get("LOCAL_RANK", 0))
    torch.cuda.set_device(args.local_rank)
    dist.init_process_group(backend="nccl", init_method="env://")
    args.device = torch.device(f"cuda:{args.local_rank}")

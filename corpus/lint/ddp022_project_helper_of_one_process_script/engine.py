"""Training helpers: the device and the distributed switch come from `args.local_rank`,
-1 (one process) in the only command the project documents (run.sh)."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

import options


def setup(args=None):
    args = args if args is not None else options.parse()
    if args.local_rank == -1:
        return torch.device("cuda")
    torch.cuda.set_device(args.local_rank)
    dist.init_process_group("nccl")
    return torch.device("cuda", args.local_rank)


def wrap(model, args):
    if args.local_rank == -1:
        return model
    return DistributedDataParallel(model, device_ids=[args.local_rank])

"""Process-group setup and logging helpers of the project."""
import os

import torch
import torch.distributed as dist


def init_distributed_mode(args):
    args.rank = int(os.environ["RANK"])
    args.world_size = int(os.environ["WORLD_SIZE"])
    args.gpu = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(args.gpu)
    dist.init_process_group("nccl", rank=args.rank, world_size=args.world_size)


def reduce_mean(value):
    tensor = torch.tensor([value], device="cuda")
    dist.all_reduce(tensor)
    return tensor.item() / dist.get_world_size()


def is_main_process():
    return dist.get_rank() == 0

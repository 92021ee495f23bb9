"""Distributed helpers shared by the training scripts (torchvision-references style)."""
import os

import torch
import torch.distributed as dist


def init_distributed_mode(args):
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:
        args.rank = int(os.environ["RANK"])
        args.world_size = int(os.environ["WORLD_SIZE"])
        args.gpu = int(os.environ["LOCAL_RANK"])
    else:
        print("Not using distributed mode")
        args.distributed = False
        return
    args.distributed = True
    torch.cuda.set_device(args.gpu)
    dist.init_process_group("nccl", init_method="env://", world_size=args.world_size,
                            rank=args.rank)
    dist.barrier()


def is_main_process():
    return not dist.is_initialized() or dist.get_rank() == 0


def save_on_master(state, path):
    if is_main_process():
        tmp = f"{path}.tmp"
        torch.save(state, tmp)
        os.replace(tmp, path)

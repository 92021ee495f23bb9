"""The library's multi-node entry: it reads the node count and the node's number from
the scheduler, so the training jobs built on it may span machines."""
import os

import torch
import torch.distributed as dist


def setup_job():
    nodes = int(os.environ.get("SLURM_NNODES", "1"))
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    return nodes, local_rank


def all_mean(value):
    tensor = torch.tensor([value], device="cuda")
    dist.all_reduce(tensor)
    return tensor.item() / dist.get_world_size()

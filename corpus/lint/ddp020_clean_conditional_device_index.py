"""An RL trainer that picks one GPU per rank inside conditional expressions (the GPU ids
given on the command line, else the local rank), with an explicit shared-GPU fallback
when the node has fewer GPUs than ranks (gloo by default)."""

import argparse
import os

import torch
import torch.distributed as dist


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--gpu-ids", type=int, nargs="*", default=[])
    parser.add_argument("--backend", default="gloo")
    args = parser.parse_args()
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    if world_size > 1:
        dist.init_process_group(args.backend, rank=local_rank, world_size=world_size)
    use_gpu = torch.cuda.is_available()
    if args.gpu_ids:
        device = torch.device(f"cuda:{args.gpu_ids[local_rank]}" if use_gpu else "cpu")
    elif torch.cuda.device_count() < world_size:
        device = torch.device("cuda" if use_gpu else "cpu")
    else:
        device = torch.device(f"cuda:{local_rank}" if use_gpu else "cpu")
    policy = torch.nn.Linear(16, 4).to(device)
    return policy

"""Visible GPUs set per process: from the local rank under torchrun, from SLURM's local
task id, or from the command line; each process then sees its own GPU as `cuda:0`."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def setup(args):
    if "SLURM_LOCALID" in os.environ:
        os.environ["CUDA_VISIBLE_DEVICES"] = os.environ["SLURM_LOCALID"]
    elif "LOCAL_RANK" in os.environ:
        os.environ["CUDA_VISIBLE_DEVICES"] = str(int(os.environ["LOCAL_RANK"]))
    else:
        os.environ["CUDA_VISIBLE_DEVICES"] = args.gpus
    dist.init_process_group("nccl")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--gpus", default="0,1,2,3")
    args = parser.parse_args()
    setup(args)
    model = DDP(nn.Linear(8, 8).cuda(), device_ids=[0])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(10):
        loss = model(torch.randn(4, 8, device="cuda")).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

"""An mmdetection-style entry point: the old launcher's `--local_rank` is only copied into
LOCAL_RANK where the launcher did not set it; the process-group helper reads the
environment, so torchrun and the old launcher both place each process on its own GPU."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def parse_args():
    parser = argparse.ArgumentParser(description="Train a detector")
    parser.add_argument("config", help="train config file path")
    parser.add_argument("--launcher", choices=["none", "pytorch"], default="none")
    parser.add_argument("--local_rank", type=int, default=0)
    args = parser.parse_args()
    if "LOCAL_RANK" not in os.environ:
        os.environ["LOCAL_RANK"] = str(args.local_rank)
    return args


def init_dist():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    return local_rank


def main():
    args = parse_args()
    local_rank = init_dist() if args.launcher == "pytorch" else 0
    model = DDP(nn.Linear(16, 4).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(100):
        optimizer.zero_grad()
        model(torch.randn(8, 16, device=f"cuda:{local_rank}")).sum().backward()
        optimizer.step()


if __name__ == "__main__":
    main()

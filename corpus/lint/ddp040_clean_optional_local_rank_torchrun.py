"""Started with torchrun: the optional --local_rank option falls back to LOCAL_RANK, and
both spellings are accepted, so the old launcher parses too."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--local-rank", "--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0))
    )
    args = parser.parse_args()
    torch.cuda.set_device(args.local_rank)
    dist.init_process_group("nccl")
    model = DDP(nn.Linear(16, 16).cuda(args.local_rank), device_ids=[args.local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(10):
        x = torch.randn(4, 16, device=f"cuda:{args.local_rank}")
        loss = model(x).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

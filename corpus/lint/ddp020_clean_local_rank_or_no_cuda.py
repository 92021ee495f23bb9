"""The pre-torchrun switch: `local_rank == -1 or no_cuda` is the side that joins no process
group (one process, or the CPU); the other side picks this rank's GPU and joins the job."""

import argparse
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--no_cuda", action="store_true")
    args = parser.parse_args()
    args.local_rank = int(os.environ.get("LOCAL_RANK", -1))
    if args.local_rank == -1 or args.no_cuda:
        device = torch.device("cuda" if torch.cuda.is_available() and not args.no_cuda else "cpu")
    else:
        torch.cuda.set_device(args.local_rank)
        device = torch.device("cuda", args.local_rank)
        dist.init_process_group("nccl")
    model = nn.Linear(32, 4).to(device)
    if args.local_rank != -1:
        model = DistributedDataParallel(model, device_ids=[args.local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    for _ in range(10):
        loss = model(torch.randn(8, 32, device=device)).logsumexp(-1).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()

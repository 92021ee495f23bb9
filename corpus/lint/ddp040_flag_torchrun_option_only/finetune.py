"""Hugging Face example-style fine-tuning: distributed mode hangs on --local_rank, which
the README's torchrun never passes."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=2e-5)
    parser.add_argument("--local_rank", type=int, default=-1)  # expect: DDP022, DDP040
    args = parser.parse_args()
    if args.local_rank == -1:
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    else:
        torch.cuda.set_device(args.local_rank)
        device = torch.device("cuda", args.local_rank)
        dist.init_process_group("nccl")
    model = nn.Linear(256, 2).to(device)
    if args.local_rank != -1:
        model = DDP(model, device_ids=[args.local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    for _ in range(args.epochs):
        x = torch.ones(8, 256, device=device)
        loss = model(x).logsumexp(1).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()

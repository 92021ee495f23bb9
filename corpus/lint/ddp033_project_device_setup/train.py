"""Resumes on every rank from `--resume`; the GPU is chosen by `utils.setup`, so this file
never names CUDA itself, and the checkpoint it resumes from holds rank 0's GPU tensors."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

from utils.setup import default_setup


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--resume", default="")
    parser.add_argument("--out", default="work_dirs/run")
    args = parser.parse_args()
    default_setup(args)
    net = nn.Linear(128, 16).to(args.device)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.05)
    start = 0
    if args.resume:
        state = torch.load(args.resume)  # expect: DDP033
        net.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        start = state["epoch"] + 1
    model = DDP(net, device_ids=[args.local_rank])
    for epoch in range(start, 50):
        loss = model(torch.randn(32, 128, device=args.device)).square().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if dist.get_rank() == 0:
            state = {"model": net.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch}
            torch.save(state, os.path.join(args.out, f"epoch_{epoch}.pth"))


if __name__ == "__main__":
    main()

"""Saves the wrapper's state dict and resumes by loading it back into the wrapper with
strict=False: the prefixed keys load there, but a loose load may be reading other weights,
so whether anything loads this file into a bare model is unknown: an unproven finding,
whose fix is unsafe (after it, the resume would silently load nothing)."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--resume", default="")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--out", default="last.pt")
    args = parser.parse_args()
    dist.init_process_group("gloo")
    model = DDP(nn.Linear(10, 2))
    if args.resume:
        checkpoint = torch.load(args.resume, map_location="cpu")
        missing, unexpected = model.load_state_dict(checkpoint["model"], strict=False)
        print(f"resumed; missing {len(missing)}, unexpected {len(unexpected)}")
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(args.epochs):
        loss = model(torch.randn(8, 10)).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if dist.get_rank() == 0:
            torch.save({"model": model.state_dict(), "epoch": epoch}, args.out + ".tmp")  # expect-preview: DDP006
            os.replace(args.out + ".tmp", args.out)
        dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

"""Resume on the main process only, then, when the job is distributed, broadcast the start
epoch from rank 0 and read it back: every rank of a distributed run loops over the same
epochs; the rank-0 value reaches the loop alone only in a one-process run."""
import argparse
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def main(model, loader):
    parser = argparse.ArgumentParser()
    parser.add_argument("--resume", default="")
    parser.add_argument("--epochs", type=int, default=100)
    args = parser.parse_args()
    use_ddp = "WORLD_SIZE" in os.environ
    if use_ddp:
        dist.init_process_group("nccl")
    rank = dist.get_rank() if use_ddp else 0
    device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", 0)))
    model = model.to(device)
    if use_ddp:
        model = DDP(model, device_ids=[device.index])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    start_epoch = 0
    if args.resume:
        if rank == 0:
            checkpoint = torch.load(args.resume, map_location="cpu")
            start_epoch = checkpoint["epoch"] + 1
        if use_ddp:
            held = torch.tensor([start_epoch], device=device)
            dist.broadcast(held, src=0)
            start_epoch = int(held.item())
    for epoch in range(start_epoch, args.epochs):
        if use_ddp:
            loader.sampler.set_epoch(epoch)
        for batch, target in loader:
            loss = torch.nn.functional.mse_loss(model(batch.to(device)), target.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

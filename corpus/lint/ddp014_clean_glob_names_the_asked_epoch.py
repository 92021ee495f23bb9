"""Tau-lepton classifier on several nodes: every epoch writes its own ckpt_{epoch}.pt, and a
restart reloads the epoch the user names with --resume-epoch (found with a glob because
the run folder carries a time stamp); nothing is overwritten."""
import argparse
import glob
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--resume-epoch", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--out", default=os.environ.get("SCRATCH", "."))
    args = parser.parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = DDP(nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 2)).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    if args.resume_epoch != 0:
        path = glob.glob(f"{args.out}/run_*/models/ckpt_{args.resume_epoch}.pt")[0]
        state = torch.load(path, map_location="cpu")
        model.module.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
    events = torch.load("events.pt")
    sampler = DistributedSampler(events, drop_last=True)
    loader = DataLoader(events, batch_size=512, sampler=sampler)
    run_dir = os.path.join(args.out, "run_" + os.environ.get("SLURM_JOB_ID", "local"), "models")
    os.makedirs(run_dir, exist_ok=True)
    for epoch in range(args.resume_epoch, args.epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            state = {"model": model.module.state_dict(), "optimizer": optimizer.state_dict()}
            torch.save(state, os.path.join(run_dir, f"ckpt_{epoch + 1}.pt"))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

"""Long-tailed recognition training that rewrites `latest.pth` in place every epoch and,
when restarted with `--resume` (a flag the user adds after a crash, which no launch script
of the project passes), loads that very file: a crash mid-write leaves the resume point
truncated."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--save-dir", default="runs/stage1")
    parser.add_argument("--epochs", type=int, default=200)
    parser.add_argument("--resume", action="store_true", help="resume from the latest checkpoint")
    return parser.parse_args()


def train(args):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(nn.Linear(512, 100).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    start_epoch = 0
    if args.resume:
        state = torch.load(os.path.join(args.save_dir, "latest.pth"), map_location="cpu")
        model.module.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        start_epoch = state["epoch"] + 1
    for epoch in range(start_epoch, args.epochs):
        features = torch.randn(64, 512, device="cuda")
        loss = model(features).logsumexp(-1).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if dist.get_rank() == 0:
            state = {"model": model.module.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch}
            torch.save(state, os.path.join(args.save_dir, "latest.pth"))  # expect: DDP014


if __name__ == "__main__":
    train(parse_args())

"""A resume checkpoint: saved from the wrapper and loaded strictly back into the same
wrapper, so the `module.` keys are what its only reader expects (a mismatch would raise)."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel


def train(args):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    net = DistributedDataParallel(nn.Linear(64, 10).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    start = 0
    if os.path.exists(args.checkpoint):
        saved = torch.load(args.checkpoint, map_location=f"cuda:{local_rank}")
        net.load_state_dict(saved["net"])
        optimizer.load_state_dict(saved["optimizer"])
        start = saved["epoch"] + 1
    for epoch in range(start, args.epochs):
        loss = net(torch.randn(32, 64).cuda()).logsumexp(1).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if dist.get_rank() == 0:
            saved = {"net": net.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch}
            torch.save(saved, args.checkpoint + ".tmp")
            os.replace(args.checkpoint + ".tmp", args.checkpoint)
        dist.barrier()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--checkpoint", default="resume.pt")
    parser.add_argument("--epochs", type=int, default=5)
    train(parser.parse_args())

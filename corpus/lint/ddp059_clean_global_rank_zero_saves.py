"""The same multi-node trainer saves where the global rank is 0: one process in the whole
job writes the checkpoint."""
import argparse
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def parse():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
    parser.add_argument("--nnodes", type=int, default=2, help="machines taking part in the job")
    parser.add_argument("--out", default="/shared/checkpoints/detector")
    return parser.parse_args()


def main(detector, loader, epochs):
    args = parse()
    dist.init_process_group("nccl")
    torch.cuda.set_device(args.local_rank)
    model = DDP(detector.cuda(), device_ids=[args.local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    for epoch in range(epochs):
        for images, targets in loader:
            loss = model(images.cuda(), targets)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            torch.save(model.module.state_dict(), f"{args.out}/epoch_{epoch}.pth")

"""The option's value is replaced by the launcher's environment in a helper two imports
away (`common.launch` -> `common.env`), before the script reads it."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

from common.launch import apply_launcher_environment


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=24)
    parser.add_argument("--local_rank", type=int, default=0)
    args = parser.parse_args()
    apply_launcher_environment(args)
    torch.cuda.set_device(args.local_rank)
    dist.init_process_group("nccl")
    model = DDP(nn.Conv2d(3, 64, 3).cuda(), device_ids=[args.local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)
    for _ in range(args.epochs):
        images = torch.randn(2, 3, 512, 512, device="cuda")
        loss = model(images).abs().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()

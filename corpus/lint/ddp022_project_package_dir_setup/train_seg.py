"""Segmentation training of a package installed from this folder (`package_dir={"segkit":
"."}` in setup.py): `segkit.common.launch_env` is `common/launch_env.py` here, and it takes
the device from LOCAL_RANK; the `--local_rank` argument is a leftover."""

import argparse

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

from segkit.common.launch_env import device_for_this_process


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=0)
    parser.add_argument("--iters", type=int, default=500)
    args = parser.parse_args()
    device = device_for_this_process()
    dist.init_process_group("nccl")
    model = DDP(nn.Conv2d(3, 4, 1).to(device), device_ids=[device.index])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(args.iters):
        optimizer.zero_grad()
        model(torch.randn(2, 3, 16, 16, device=device)).mean().backward()
        optimizer.step()
    if args.local_rank == 0:
        print("done")


if __name__ == "__main__":
    main()

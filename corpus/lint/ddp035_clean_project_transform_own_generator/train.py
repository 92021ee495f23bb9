"""One seed for every rank, but the dataset (volumes.py) draws from per-sample generators:
the ranks repeat no draw, whatever their seed."""
import argparse
import os
import random

import numpy as np
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler

from volumes import PatchSet


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=1000)
    parser.add_argument("--epochs", type=int, default=200)
    args = parser.parse_args()

    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)

    volumes = [np.random.rand(64, 64, 64).astype("float32") for _ in range(32)]
    patches = PatchSet(volumes)
    sampler = DistributedSampler(patches, drop_last=True)
    loader = DataLoader(patches, batch_size=2, sampler=sampler, num_workers=4)
    net = DDP(nn.Conv3d(1, 4, 3, padding=1).cuda(local_rank), device_ids=[local_rank])
    opt = torch.optim.Adam(net.parameters(), lr=1e-4)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for patch in loader:
            patch = patch.unsqueeze(1).cuda(local_rank, non_blocking=True)
            loss = net(patch).abs().mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

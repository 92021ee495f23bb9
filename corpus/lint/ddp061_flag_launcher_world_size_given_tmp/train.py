"""A point-cloud segmentation trainer started with `python -m torch.distributed.run
--nproc_per_node=8 train.py`. It hands the process group the world size it parsed but takes
the rank from the environment, after pinning a port of its own."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

DIST_PORT = 23456


def init_distributed(args):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(DIST_PORT)  # expect: DDP061
    dist.init_process_group(backend="nccl", init_method="env://", world_size=args.world_size)  # expect: DDP049
    args.local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(args.local_rank)


def main(args):
    init_distributed(args)
    points = TensorDataset(torch.randn(2048, 3, 1024), torch.randint(0, 13, (2048, 1024)))
    sampler = DistributedSampler(points)
    loader = DataLoader(points, batch_size=8, sampler=sampler, drop_last=True)
    net = nn.Sequential(nn.Conv1d(3, 64, 1), nn.ReLU(), nn.Conv1d(64, 13, 1))
    model = DDP(net.cuda(), device_ids=[args.local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for xyz, labels in loader:
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(xyz.cuda()), labels.cuda()).backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--world-size", type=int, default=8)
    parser.add_argument("--epochs", type=int, default=100)
    main(parser.parse_args())

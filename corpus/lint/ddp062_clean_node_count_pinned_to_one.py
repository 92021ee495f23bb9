"""A spawn launcher that keeps a `nodes` factor in its world size, but pins it to one
machine before the product (`args.nodes = 1`): every process runs here, so a loopback
rendezvous address is right."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def worker(rank, args):
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = str(args.port)
    dist.init_process_group("nccl", rank=rank, world_size=args.world_size)
    torch.cuda.set_device(rank)
    scans = TensorDataset(torch.randn(2048, 1, 32, 32), torch.randint(0, 2, (2048,)))
    sampler = DistributedSampler(scans, shuffle=True, drop_last=True)
    loader = DataLoader(scans, batch_size=32, sampler=sampler)
    net = nn.Sequential(nn.Conv2d(1, 8, 3), nn.ReLU(), nn.Flatten(), nn.Linear(8 * 30 * 30, 2))
    model = DDP(net.cuda(rank), device_ids=[rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for images, labels in loader:
            loss = nn.functional.cross_entropy(model(images.cuda(rank)), labels.cuda(rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--gpu_ids", type=int, nargs="+", default=[0, 1])
    parser.add_argument("--port", type=int, default=29511)
    parser.add_argument("--epochs", type=int, default=30)
    args = parser.parse_args()
    args.nodes = 1
    args.ngpus_per_node = len(args.gpu_ids)
    args.world_size = args.nodes * args.ngpus_per_node
    mp.spawn(worker, args=(args,), nprocs=args.ngpus_per_node)


if __name__ == "__main__":
    main()

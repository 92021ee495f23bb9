"""Single-node training started with `mp.spawn`: one worker per GPU.

The `--local_rank` option survives from a launcher-based version of the script; every
worker replaces it with its spawn index before anything reads it, so no launcher is
involved and the parsed value is never used.
"""
import argparse

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser.add_argument("--epochs", type=int, default=3)
parser.add_argument("--port", default="23456")


def worker(index, nprocs, args):
    args.local_rank = index
    dist.init_process_group(
        "nccl", init_method=f"tcp://127.0.0.1:{args.port}", world_size=nprocs, rank=index
    )
    torch.cuda.set_device(args.local_rank)
    data = TensorDataset(torch.randn(1024, 10), torch.randn(1024, 1))
    sampler = DistributedSampler(data, drop_last=True)
    loader = DataLoader(data, batch_size=32, sampler=sampler)
    model = DDP(nn.Linear(10, 1).cuda(args.local_rank), device_ids=[args.local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            x, y = x.cuda(args.local_rank), y.cuda(args.local_rank)
            loss = nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if args.local_rank == 0:
            print(f"epoch {epoch}: loss {loss.item():.4f}")
    dist.destroy_process_group()


def main():
    args = parser.parse_args()
    nprocs = torch.cuda.device_count()
    mp.spawn(worker, nprocs=nprocs, args=(nprocs, args))


if __name__ == "__main__":
    main()

"""The script starts its own workers with mp.spawn: `--world_size` is both the number of
processes it starts and the size it gives the process group, so they always agree."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def worker(rank, args):
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29500")
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method="env://", world_size=args.world_size, rank=rank)
    data = TensorDataset(torch.randn(2048, 10), torch.randint(0, 4, (2048,)))
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=32, sampler=sampler)
    model = DDP(nn.Linear(10, 4).cuda(rank), device_ids=[rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.cuda(rank)), y.cuda(rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--world_size", default=4, type=int)
    parser.add_argument("--epochs", default=10, type=int)
    args = parser.parse_args()
    mp.spawn(worker, nprocs=args.world_size, args=(args,))

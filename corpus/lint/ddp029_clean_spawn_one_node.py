"""One machine, one process per visible GPU started by mp.spawn: the device count is the
world size by construction."""
import argparse

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def run(rank, world_size, args):
    dist.init_process_group("nccl", init_method="tcp://localhost:12355",
                            rank=rank, world_size=world_size)
    torch.cuda.set_device(rank)
    batch = args.batch_size // world_size
    dataset = TensorDataset(torch.randn(10000, 12), torch.randint(0, 3, (10000,)))
    sampler = DistributedSampler(dataset, drop_last=True)
    loader = DataLoader(dataset, batch_size=batch, sampler=sampler)
    model = DDP(nn.Linear(12, 3).cuda(rank), device_ids=[rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr * world_size)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            x, y = x.cuda(rank), y.cuda(rank)
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--epochs", type=int, default=10)
    args = parser.parse_args()
    world_size = torch.cuda.device_count()
    mp.spawn(run, args=(world_size, args), nprocs=world_size)

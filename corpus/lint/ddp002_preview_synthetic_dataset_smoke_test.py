"""A DDP smoke test spawned on every GPU: it fits a linear layer to a quadratic over a
dataset of random tensors the script draws once. The sampler's epoch never moves, so each
epoch repeats one order, but the data is a stand-in: the finding stays unproven."""
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset, DistributedSampler


class QuadraticPoints(Dataset):
    def __init__(self, dim, count=256):
        self.x = torch.randn(count, dim)
        self.y = self.x ** 2 + 0.5 * self.x

    def __len__(self):
        return self.x.size(0)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


def worker(rank, world_size, epochs):
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29511")
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    torch.cuda.set_device(rank)
    data = QuadraticPoints(8)
    sampler = DistributedSampler(data, num_replicas=world_size, rank=rank)
    loader = DataLoader(data, batch_size=32, sampler=sampler)
    model = DDP(nn.Linear(8, 8).cuda(rank), device_ids=[rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-2)
    for epoch in range(epochs):  # expect-preview: DDP002
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x.cuda(rank)), y.cuda(rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if rank == 0:
            print(f"epoch {epoch}: loss {loss.item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    gpus = torch.cuda.device_count()
    mp.spawn(worker, args=(gpus, 5), nprocs=gpus)

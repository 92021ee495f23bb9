"""A script that downloads its dataset in module code and starts its workers with
`mp.spawn` from `main()`: the parent runs the module code to its end before any worker
exists; the workers import the module again and find the files in place."""
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.utils.data import DataLoader, DistributedSampler
from torchvision import datasets, transforms

DATA_ROOT = "./data"
train_set = datasets.FashionMNIST(
    DATA_ROOT, train=True, download=True, transform=transforms.ToTensor()
)


def worker(rank, world_size):
    os.environ.setdefault("MASTER_ADDR", "localhost")
    os.environ.setdefault("MASTER_PORT", "29514")
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    sampler = DistributedSampler(train_set, drop_last=True)
    loader = DataLoader(train_set, batch_size=64, sampler=sampler)
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(784, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(2):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = torch.nn.functional.cross_entropy(model(x.flatten(1)), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


def main():
    world_size = 2
    mp.spawn(worker, args=(world_size,), nprocs=world_size, join=True)


if __name__ == "__main__":
    main()

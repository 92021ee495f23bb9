"""The twin of `ddp025_clean_module_download_before_spawn.py`: the download sits in the
spawned worker, so every worker downloads into the same folder at once."""
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.utils.data import DataLoader, DistributedSampler
from torchvision import datasets, transforms

DATA_ROOT = "./data"


def worker(rank, world_size):
    os.environ.setdefault("MASTER_ADDR", "localhost")
    os.environ.setdefault("MASTER_PORT", "29515")
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    train_set = datasets.FashionMNIST(  # expect: DDP025
        DATA_ROOT, train=True, download=True, transform=transforms.ToTensor()
    )
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

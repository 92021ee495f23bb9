"""`--gpu` picks the device in one branch; without it the model goes to the default GPU
on every rank."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--gpu", type=int, default=None)
    parser.add_argument("--epochs", type=int, default=5)
    args = parser.parse_args()
    dist.init_process_group("nccl")
    model = nn.Sequential(nn.Linear(30, 60), nn.Tanh(), nn.Linear(60, 3))
    if args.gpu is not None:
        torch.cuda.set_device(args.gpu)
        model = DistributedDataParallel(model.cuda(args.gpu), device_ids=[args.gpu])
    else:
        model = DistributedDataParallel(model.cuda())  # expect: DDP020
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    data = TensorDataset(torch.randn(3000, 30), torch.randint(0, 3, (3000,)))
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=30, sampler=sampler)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            x, y = x.to(next(model.parameters()).device), y.to(next(model.parameters()).device)
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

"""Builds a torch.device from dist.get_rank() and passes it around to helpers."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def get_device():
    return torch.device(f"cuda:{dist.get_rank()}")  # expect-preview: DDP018


def train_one_epoch(model, loader, optimizer, device):
    model.train()
    for x, y in loader:
        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
        loss = nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    return loss.detach()


def main():
    dist.init_process_group(backend=os.environ.get("BACKEND", "nccl"))
    device = get_device()
    torch.cuda.set_device(device)
    model = DDP(nn.Linear(32, 1).to(device))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    data = TensorDataset(torch.randn(2048, 32), torch.randn(2048, 1))
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=32, sampler=sampler)
    for epoch in range(5):
        sampler.set_epoch(epoch)
        last = train_one_epoch(model, loader, optimizer, device)
        dist.all_reduce(last)
        if dist.get_rank() == 0:
            print(epoch, last.item() / dist.get_world_size())
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

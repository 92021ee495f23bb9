"""Device kept as the string "cuda"; metrics averaged with all_reduce on a "cuda" tensor."""
import datetime
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def average(value):
    t = torch.tensor([value], device="cuda")  # expect: DDP020
    dist.all_reduce(t)
    return t.item() / dist.get_world_size()


def main():
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=5))
    rank = dist.get_rank()
    device = "cuda"  # expect: DDP020
    model = DDP(nn.Linear(16, 16).to(device))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    data = TensorDataset(torch.randn(2048, 16), torch.randn(2048, 16))
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=32, sampler=sampler)
    for epoch in range(4):
        sampler.set_epoch(epoch)
        total = 0.0
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            loss = nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item()
        mean = average(total / len(loader))
        if rank == 0:
            print(f"epoch {epoch}: {mean:.4f} (pid {os.getpid()})")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

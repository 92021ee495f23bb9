"""Each epoch builds a fresh sampler and loader and hands them to a training helper;
nothing tells the sampler which epoch it is."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def train_one_epoch(model, loader, optimizer, device):
    model.train()
    for x, y in loader:
        loss = nn.functional.mse_loss(model(x.to(device)), y.to(device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    device = torch.device("cuda", local_rank)
    torch.cuda.set_device(device)
    dist.init_process_group("nccl")
    series = TensorDataset(torch.randn(7000, 48), torch.randn(7000, 1))
    model = DDP(nn.Linear(48, 1).to(device), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-4)
    for epoch in range(25):  # expect: DDP002
        train_sampler = DistributedSampler(series, drop_last=True)
        train_loader = DataLoader(series, batch_size=70, sampler=train_sampler, pin_memory=True)
        train_one_epoch(model, train_loader, optimizer, device)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

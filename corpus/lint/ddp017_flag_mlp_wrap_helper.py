"""Tabular MLP with BatchNorm1d; the DDP wrap happens in a setup helper."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def make_mlp(width):
    return nn.Sequential(
        nn.Linear(40, width),
        nn.BatchNorm1d(width),
        nn.ReLU(),
        nn.Linear(width, 1),
    )


def setup_model(model, local_rank):
    model = model.cuda(local_rank)
    return DDP(model, device_ids=[local_rank])  # expect: DDP017


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = setup_model(make_mlp(256), local_rank)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    scaler = torch.cuda.amp.GradScaler()
    data = TensorDataset(torch.randn(10000, 40), torch.randn(10000, 1))
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=16, sampler=sampler)
    for epoch in range(20):
        sampler.set_epoch(epoch)
        for x, y in loader:
            x, y = x.cuda(local_rank), y.cuda(local_rank)
            with torch.autocast("cuda", dtype=torch.float16):
                loss = nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

"""Rank 0 validates and decides; the decision is broadcast so every rank leaves together."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler

from tabular import TabularSet


def train_one_epoch(model, loader, optimizer, device):
    for features, labels in loader:
        features, labels = features.to(device), labels.to(device)
        loss = nn.functional.cross_entropy(model(features), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


@torch.no_grad()
def validate(net, loader, device):
    total, count = 0.0, 0
    for features, labels in loader:
        logits = net(features.to(device))
        total += nn.functional.cross_entropy(logits, labels.to(device), reduction="sum").item()
        count += len(labels)
    return total / max(count, 1)


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    device = torch.device("cuda", local_rank)
    net = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 10)).to(device)
    model = DDP(net, device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    train_set = TabularSet("train.parquet")
    sampler = DistributedSampler(train_set, shuffle=True, drop_last=True)
    loader = DataLoader(train_set, batch_size=256, sampler=sampler)
    val_loader = DataLoader(TabularSet("val.parquet"), batch_size=256)
    best, bad_epochs = float("inf"), 0
    for epoch in range(100):
        sampler.set_epoch(epoch)
        train_one_epoch(model, loader, optimizer, device)
        stop = torch.zeros(1, device=device)
        if rank == 0:
            val_loss = validate(model.module, val_loader, device)
            if val_loss < best:
                best, bad_epochs = val_loss, 0
            else:
                bad_epochs += 1
            stop.fill_(float(bad_epochs >= 5))
        dist.broadcast(stop, src=0)
        if stop.item() > 0:
            break
    if rank == 0:
        print(f"best validation loss {best:.4f}")
        return
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

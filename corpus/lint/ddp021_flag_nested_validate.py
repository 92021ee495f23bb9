"""Regression model; validation helper nested two calls below the rank check."""
import argparse
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as Wrapper
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def mean_abs_error(net, loader, device):
    errors = []
    with torch.no_grad():
        for x, y in loader:
            pred = net(x.to(device))  # expect: DDP021
            errors.append((pred.squeeze(-1) - y.to(device)).abs().mean().item())
    return sum(errors) / len(errors)


def log_validation(net, loader, device, epoch):
    mae = mean_abs_error(net, loader, device)
    print(f"[epoch {epoch}] val MAE {mae:.4f}")  # expect: DDP038


def train(args):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    device = torch.device(f"cuda:{local_rank}")

    features = torch.randn(10000, 16)
    targets = features.sum(dim=1)
    train_set = TensorDataset(features[:9000], targets[:9000])
    val_set = TensorDataset(features[9000:], targets[9000:])

    model = nn.Sequential(nn.Linear(16, 64), nn.BatchNorm1d(64), nn.GELU(), nn.Linear(64, 1))
    model = Wrapper(model.to(device), device_ids=[local_rank])  # expect: DDP017
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)

    sampler = DistributedSampler(train_set, shuffle=True, drop_last=True)
    loader = DataLoader(train_set, batch_size=args.batch_size, sampler=sampler)
    val_loader = DataLoader(val_set, batch_size=256, sampler=DistributedSampler(val_set, shuffle=False))

    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        model.train()
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            loss = nn.functional.mse_loss(model(x).squeeze(-1), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if rank == 0:
            model.eval()
            log_validation(model, val_loader, device, epoch)
    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=64)
    train(parser.parse_args())

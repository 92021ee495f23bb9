"""Segmentation trainer: rank 0 validates and alone decides to stop early."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler

from seg_data import SegmentationSet


class EarlyStopper:
    def __init__(self, patience=5, min_delta=0.0):
        self.patience = patience
        self.min_delta = min_delta
        self.best = float("inf")
        self.bad_epochs = 0

    def early_stop(self, loss):
        if loss < self.best - self.min_delta:
            self.best, self.bad_epochs = loss, 0
            return False
        self.bad_epochs += 1
        return self.bad_epochs >= self.patience


def train_one_epoch(model, loader, optimizer, criterion, device):
    model.train()
    total = 0.0
    for images, masks in loader:
        images, masks = images.to(device), masks.to(device)
        loss = criterion(model(images), masks)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.item()
    return total / len(loader)


@torch.no_grad()
def validate(net, loader, criterion, device):
    net.eval()
    total = 0.0
    for images, masks in loader:
        total += criterion(net(images.to(device)), masks.to(device)).item()
    return total / max(len(loader), 1)


def main(args):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    device = torch.device("cuda", local_rank)
    net = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.Conv2d(32, 4, 1))
    model = DDP(net.to(device), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    criterion = nn.CrossEntropyLoss()
    train_set = SegmentationSet(args.data, split="train")
    sampler = DistributedSampler(train_set, shuffle=True, drop_last=True)
    loader = DataLoader(train_set, batch_size=8, sampler=sampler, num_workers=4)
    val_loader = DataLoader(SegmentationSet(args.data, split="val"), batch_size=8)
    stopper = EarlyStopper(patience=args.patience)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        train_loss = train_one_epoch(model, loader, optimizer, criterion, device)
        if rank == 0:
            val_loss = validate(model.module, val_loader, criterion, device)
            print(f"epoch {epoch}: train {train_loss:.4f} val {val_loss:.4f}")
            if args.early_stop and stopper.early_stop(val_loss):
                print("patience exhausted, stopping")
                break  # expect: DDP047
    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="data/")
    parser.add_argument("--lr", type=float, default=3e-4)
    parser.add_argument("--epochs", type=int, default=50)
    parser.add_argument("--patience", type=int, default=5)
    parser.add_argument("--early-stop", action="store_true")
    main(parser.parse_args())

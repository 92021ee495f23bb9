"""OCR-style reference trainer with `--test-only` and `--find-lr` modes that rank 0 runs alone."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler

from ocr_data import LineDataset, build_recognizer


def fit_one_epoch(model, loader, optimizer, device):
    model.train()
    for images, targets in loader:
        images, targets = images.to(device), targets.to(device)
        loss = model(images, targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


@torch.no_grad()
def evaluate(net, loader, device):
    net.eval()
    losses = [net(images.to(device), targets.to(device)).item() for images, targets in loader]
    return sum(losses) / max(len(losses), 1)


def record_lr(model, loader, optimizer, device, steps=100):
    lrs, losses = [], []
    for step, (images, targets) in enumerate(loader):
        if step >= steps:
            break
        for group in optimizer.param_groups:
            group["lr"] = 1e-6 * 1.1**step
        loss = model(images.to(device), targets.to(device))  # expect: DDP021
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        lrs.append(optimizer.param_groups[0]["lr"])
        losses.append(loss.item())
    return lrs, losses


def main(args):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    device = torch.device("cuda", local_rank)
    net = build_recognizer(args.arch).to(device)
    val_loader = DataLoader(LineDataset(args.val_path), batch_size=64)
    if rank == 0 and args.test_only:
        print(f"validation loss {evaluate(net, val_loader, device):.4f}")
        return  # expect: DDP047
    train_set = LineDataset(args.train_path)
    sampler = DistributedSampler(train_set, shuffle=True, drop_last=True)
    loader = DataLoader(train_set, batch_size=64, sampler=sampler, num_workers=4)
    model = DDP(net, device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    if rank == 0 and args.find_lr:
        lrs, losses = record_lr(model, loader, optimizer, device)
        print(list(zip(lrs, losses)))
        return  # expect: DDP047
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        fit_one_epoch(model, loader, optimizer, device)
        if rank == 0:
            print(f"epoch {epoch}: val {evaluate(model.module, val_loader, device):.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--arch", default="crnn")
    parser.add_argument("--train-path", default="train/")
    parser.add_argument("--val-path", default="val/")
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--test-only", action="store_true")
    parser.add_argument("--find-lr", action="store_true")
    main(parser.parse_args())

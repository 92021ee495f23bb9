"""HF-style loop split into train_one_epoch(); accumulation with clipping on the sync step."""
import argparse
import math
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def train_one_epoch(model, loader, optimizer, scheduler, args, epoch):
    model.train()
    total = 0.0
    for step, (x, y) in enumerate(loader):
        x, y = x.cuda(args.gpu, non_blocking=True), y.cuda(args.gpu, non_blocking=True)
        loss = nn.functional.mse_loss(model(x), y)
        loss = loss / args.gradient_accumulation_steps
        loss.backward()  # expect: DDP024
        total += loss.item()
        if (step + 1) % args.gradient_accumulation_steps == 0 or step + 1 == len(loader):
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
    return total


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--gradient_accumulation_steps", type=int, default=8)
    parser.add_argument("--max_grad_norm", type=float, default=1.0)
    parser.add_argument("--epochs", type=int, default=2)
    args = parser.parse_args()
    args.gpu = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(args.gpu)
    dist.init_process_group("nccl")

    data = TensorDataset(torch.randn(8192, 64), torch.randn(8192, 1))
    model = nn.Sequential(nn.Linear(64, 256), nn.GELU(), nn.Linear(256, 1)).cuda(args.gpu)
    model = DistributedDataParallel(model, device_ids=[args.gpu])
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=16, sampler=sampler)
    updates = math.ceil(len(loader) / args.gradient_accumulation_steps) * args.epochs
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: 1 - s / updates)

    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        total = train_one_epoch(model, loader, optimizer, scheduler, args, epoch)
        if dist.get_rank() == 0:
            print(f"epoch {epoch}: loss {total / len(loader):.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

"""Segmentation fine-tuning; the AMP dtype is a module constant set to bfloat16."""
import argparse
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.amp import GradScaler, autocast
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

AMP_DTYPE = torch.bfloat16


def train_step(model, images, masks, optimizer, scaler):
    with autocast("cuda", dtype=AMP_DTYPE):
        loss = nn.functional.binary_cross_entropy_with_logits(model(images), masks)
    optimizer.zero_grad(set_to_none=True)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    return loss.detach()


def main(args):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)

    data = TensorDataset(torch.randn(512, 3, 64, 64), torch.randint(0, 2, (512, 1, 64, 64)).float())
    net = nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1), nn.GroupNorm(4, 16), nn.ReLU(), nn.Conv2d(16, 1, 1)
    )
    model = DDP(net.to(device), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    scaler = GradScaler("cuda")  # expect: DDP023

    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=8, sampler=sampler)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for images, masks in loader:
            loss = train_step(model, images.to(device), masks.to(device), optimizer, scaler)
        dist.all_reduce(loss)
        if dist.get_rank() == 0:
            print(f"epoch {epoch}: summed last-batch loss {loss.item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--epochs", type=int, default=3)
    main(parser.parse_args())

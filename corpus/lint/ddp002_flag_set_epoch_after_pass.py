"""Segmentation fine-tuning: the sampler's epoch is advanced at the end of each epoch,
after the pass it was meant to order, so the first two epochs share one order."""
import argparse
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def run_epoch(net, loader, optim, scaler, device):
    net.train()
    for images, masks in loader:
        images, masks = images.to(device, non_blocking=True), masks.to(device, non_blocking=True)
        with torch.autocast("cuda", dtype=torch.float16):
            loss = nn.functional.cross_entropy(net(images), masks)
        optim.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.step(optim)
        scaler.update()


def finetune(net, pixels, first, last, device):
    """A second stage that may resume: its first pass is ordered by epoch 0 whatever
    `first` is, and when `first` is 0 the second pass is too."""
    stage_loader = DataLoader(pixels, batch_size=8,
                              sampler=DistributedSampler(pixels, drop_last=True))
    optim = torch.optim.SGD(net.parameters(), lr=0.001)
    for ep in range(first, last):
        for images, masks in stage_loader:
            loss = nn.functional.cross_entropy(net(images.to(device)), masks.to(device))
            optim.zero_grad()
            loss.backward()
            optim.step()
        stage_loader.sampler.set_epoch(ep)  # expect-preview: DDP002


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=40)
    parser.add_argument("--resume-epoch", type=int, default=0)
    args = parser.parse_args()

    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)

    pixels = TensorDataset(torch.randn(512, 3, 32, 32), torch.randint(0, 5, (512, 32, 32)))
    shards = DistributedSampler(pixels, shuffle=True, drop_last=True)
    loader = DataLoader(pixels, batch_size=16, sampler=shards, num_workers=2)

    net = DDP(nn.Conv2d(3, 5, 3, padding=1).to(device), device_ids=[local_rank])
    optim = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    scaler = torch.cuda.amp.GradScaler()

    for ep in range(args.epochs):
        run_epoch(net, loader, optim, scaler, device)
        shards.set_epoch(ep)  # expect: DDP002
    finetune(net, pixels, args.resume_epoch, args.epochs, device)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

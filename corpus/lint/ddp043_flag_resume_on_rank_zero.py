"""Segmentation trainer launched with `torchrun --nproc_per_node=8 train.py --resume`:
only rank 0 opens the checkpoint, so only rank 0 starts at the saved epoch; the others
start again from epoch 0 and are still training when rank 0 leaves the loop."""

import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def get_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=50)
    parser.add_argument("--resume", default="")
    return parser.parse_args()


def train_one_epoch(model, loader, optimizer, epoch):
    model.train()
    for images, masks in loader:
        logits = model(images.cuda(non_blocking=True))
        loss = nn.functional.binary_cross_entropy_with_logits(logits, masks.cuda())
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()


def main():
    args = get_args()
    dist.init_process_group(backend="nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(nn.Conv2d(3, 1, 3, padding=1).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)

    start_epoch = 0
    if dist.get_rank() == 0 and args.resume:
        checkpoint = torch.load(args.resume, map_location="cpu")
        model.module.load_state_dict(checkpoint["model"])  # expect: DDP044
        optimizer.load_state_dict(checkpoint["optimizer"])  # expect: DDP044
        start_epoch = checkpoint["epoch"] + 1

    data = TensorDataset(torch.randn(64, 3, 32, 32), torch.rand(64, 1, 32, 32))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=4, sampler=sampler)
    for epoch in range(start_epoch, args.epochs):  # expect: DDP043
        sampler.set_epoch(epoch)
        train_one_epoch(model, loader, optimizer, epoch)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

"""Finite-scalar-quantisation autoencoder training; the checkpoint keeps the DDP wrapper's
keys, and the evaluation script beside it removes the prefix when it loads them."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    images = torch.load("train_images.pt")
    sampler = DistributedSampler(images, drop_last=True)
    loader = DataLoader(images, batch_size=64, sampler=sampler, num_workers=4)
    autoencoder = nn.Sequential(nn.Conv2d(3, 8, 4, stride=4), nn.Tanh(), nn.ConvTranspose2d(8, 3, 4, stride=4))
    model = DDP(autoencoder.cuda(), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-4)
    for epoch in range(50):
        sampler.set_epoch(epoch)
        for x in loader:
            x = x.cuda(non_blocking=True)
            loss = (model(x) - x).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            torch.save(model.state_dict(), f"fsq_epoch{epoch}.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

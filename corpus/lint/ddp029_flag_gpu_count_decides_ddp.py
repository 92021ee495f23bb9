"""A diffusion trainer that turns distributed training on when it sees more than one
GPU. Under torchrun with one GPU bound to each task, every process sees one device, skips
the process group, and trains a model of its own."""
import argparse
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def join_group():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend="nccl", init_method="env://")
    return local_rank


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=100)
    parser.add_argument("--lr", type=float, default=2e-4)
    args = parser.parse_args()

    visible = torch.cuda.device_count()
    distributed = False
    local_rank = 0
    if visible > 1:  # expect: DDP029
        local_rank = join_group()
        distributed = True
    device = torch.device("cuda", local_rank)

    denoiser = nn.Sequential(nn.Linear(64, 256), nn.SiLU(), nn.Linear(256, 64)).to(device)
    if distributed:
        denoiser = DDP(denoiser, device_ids=[local_rank])
    images = TensorDataset(torch.randn(10_000, 64))
    sampler = DistributedSampler(images, drop_last=True) if distributed else None
    loader = DataLoader(images, batch_size=128, sampler=sampler, shuffle=sampler is None,
                        drop_last=True)
    opt = torch.optim.AdamW(denoiser.parameters(), lr=args.lr)

    for epoch in range(args.epochs):
        if sampler is not None:
            sampler.set_epoch(epoch)
        for (x,) in loader:
            x = x.to(device)
            noise = torch.randn_like(x)
            loss = nn.functional.mse_loss(denoiser(x + noise), noise)
            opt.zero_grad()
            loss.backward()
            opt.step()
    if distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()

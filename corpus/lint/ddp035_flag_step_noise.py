"""Denoising-diffusion training: one seed on every rank, and each step draws its timesteps
and noise from torch's generator, so every rank uses the same draws at each step."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def alphas(steps=1000):
    betas = torch.linspace(1e-4, 0.02, steps)
    return torch.cumprod(1.0 - betas, dim=0)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=50)
    args = parser.parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    torch.manual_seed(args.seed)  # expect: DDP035
    images = TensorDataset(torch.zeros(4096, 3 * 32 * 32))
    sampler = DistributedSampler(images, shuffle=True, drop_last=True)
    loader = DataLoader(images, batch_size=64, sampler=sampler, num_workers=2)
    model = DDP(nn.Linear(3 * 32 * 32, 3 * 32 * 32).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-4)
    a_bar = alphas().cuda(local_rank)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for (x,) in loader:
            x = x.cuda(local_rank, non_blocking=True)
            t = torch.randint(0, 1000, (x.shape[0],), device=x.device)
            noise = torch.randn_like(x)
            scale = a_bar[t].sqrt()[:, None]
            noisy = scale * x + (1 - scale**2).sqrt() * noise
            loss = F.mse_loss(model(noisy), noise)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

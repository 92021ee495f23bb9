"""Diffusion pre-training script whose entry point prints any traceback and ends
normally, so that a failed run 'exits cleanly' in the cluster's job list."""
import os
import traceback

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class Denoiser(nn.Module):
    def __init__(self, channels=64):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(3, channels, 3, padding=1), nn.SiLU(), nn.Conv2d(channels, 3, 3, padding=1)
        )

    def forward(self, x):
        return self.net(x)


def run(steps=10_000):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    images = torch.load("latents.pt")
    data = TensorDataset(images)
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=64, sampler=sampler, drop_last=True)
    model = DDP(Denoiser().cuda(), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    step, epoch = 0, 0
    while step < steps:
        sampler.set_epoch(epoch)
        for (x,) in loader:
            x = x.cuda(non_blocking=True)
            noise = torch.randn_like(x)
            loss = F.mse_loss(model(x + noise), noise)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            step += 1
        epoch += 1
    dist.destroy_process_group()


if __name__ == "__main__":
    try:
        run()
    except Exception:  # expect: DDP060
        traceback.print_exc()

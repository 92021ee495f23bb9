"""Denoising-diffusion training whose step noise comes from a generator seeded per rank:
the shared seed only makes the initial weights alike, and DDP copies rank 0's anyway."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main(seed=0, epochs=50):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    torch.manual_seed(seed)
    noise_gen = torch.Generator(device=f"cuda:{local_rank}")
    noise_gen.manual_seed(seed + dist.get_rank())
    images = TensorDataset(torch.zeros(4096, 768))
    sampler = DistributedSampler(images, shuffle=True, drop_last=True)
    loader = DataLoader(images, batch_size=64, sampler=sampler, num_workers=2)
    model = DDP(nn.Linear(768, 768).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-4)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for (x,) in loader:
            x = x.cuda(local_rank, non_blocking=True)
            noise = torch.randn(x.shape, device=x.device, generator=noise_gen)
            loss = F.mse_loss(model(x + noise), noise)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

"""Rank 0 exports samples through a helper that returns early; every call of it is rank-gated."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler

from faces import FaceCrops, save_image_grid


def export_samples(generator, noise, path, limit):
    with torch.no_grad():
        images = generator(noise)
    if images.shape[0] == 0:
        return
    for i, image in enumerate(images):
        if i >= limit:
            break
        save_image_grid(image, f"{path}_{i}.png")


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)
    net = nn.Sequential(nn.Linear(128, 1024), nn.ReLU(), nn.Linear(1024, 3 * 32 * 32), nn.Tanh())
    model = DDP(net.to(device), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=2e-4, betas=(0.5, 0.999))
    faces = FaceCrops("faces/")
    sampler = DistributedSampler(faces, shuffle=True, drop_last=True)
    loader = DataLoader(faces, batch_size=64, sampler=sampler, num_workers=4)
    noise = torch.randn(16, 128, device=device)
    for epoch in range(40):
        sampler.set_epoch(epoch)
        for real in loader:
            real = real.to(device).flatten(1)
            fake = model(torch.randn(real.shape[0], 128, device=device))
            loss = (fake - real).abs().mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            export_samples(model.module, noise, f"samples/epoch{epoch}", limit=8)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

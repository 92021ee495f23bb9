"""Adversarial noise generator trained against a frozen image encoder: only the
generator learns, through its own DDP wrapper."""

import os

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

from nets import ImageEncoder, NoiseGenerator


def train(loader, epochs, eps=8 / 255):
    local_rank = int(os.environ["LOCAL_RANK"])
    dist.init_process_group("nccl")
    torch.cuda.set_device(local_rank)
    encoder = DDP(ImageEncoder().cuda(), device_ids=[local_rank])
    generator = DDP(NoiseGenerator().cuda(), device_ids=[local_rank])
    encoder.requires_grad_(False)
    optimizer = torch.optim.AdamW(generator.parameters(), lr=1e-4)
    for epoch in range(epochs):
        loader.sampler.set_epoch(epoch)
        for images in loader:
            images = images.cuda(non_blocking=True)
            with torch.no_grad():
                clean = encoder.module.embed(images)
            noise = generator(clean).clamp(-eps, eps)
            shuffled = []
            for _ in range(2):  # the noise must fool the encoder on other images too
                shuffled.append((noise + images[torch.randperm(len(images))]).clamp(0, 1))
            attacked = encoder.module.embed(torch.cat(shuffled))
            loss = F.cosine_similarity(attacked, clean.repeat(2, 1)).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

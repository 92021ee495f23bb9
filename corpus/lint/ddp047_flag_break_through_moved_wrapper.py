"""Vocoder training whose step budget is checked inside the rank-0 logging block; the
wrapper is moved to the device right after it is built."""

import os

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

from vocoder import Generator


def train(loader, total_steps, log_every=100):
    rank = int(os.environ["RANK"])
    device = torch.device("cuda", int(os.environ["LOCAL_RANK"]))
    dist.init_process_group("nccl")
    generator = DDP(Generator(), device_ids=[device.index]).to(device)
    optimizer = torch.optim.AdamW(generator.parameters(), lr=2e-4, betas=(0.8, 0.99))
    step = 0
    for epoch in range(10_000):
        loader.sampler.set_epoch(epoch)
        for mel, audio in loader:
            loss = F.l1_loss(generator(mel.to(device)), audio.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            step += 1
            if rank == 0:
                if step % log_every == 0:
                    print(f"step {step}: {loss.item():.4f}")
                if step == total_steps:
                    break  # expect: DDP047

"""Step-based diffusion-style trainer: batches come from an endless generator that hands
on each pass of the loader with `yield from`, and nothing ever calls `set_epoch`, so
every pass over the data repeats the first pass's order on every rank."""
import os

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler


def forever(loader):
    while True:  # expect: DDP002
        yield from loader


def main(model, dataset, total_steps=400_000, log_every=1000):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    sampler = DistributedSampler(dataset, shuffle=True)
    loader = DataLoader(dataset, batch_size=64, sampler=sampler, num_workers=8, drop_last=True)
    model = DDP(model.cuda(), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    batches = forever(loader)
    for step in range(total_steps):
        images, noise_levels = next(batches)
        noise = torch.randn_like(images)
        predicted = model(images.cuda() + noise.cuda() * noise_levels.cuda().view(-1, 1, 1, 1))
        loss = F.mse_loss(predicted, noise.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % log_every == 0 and dist.get_rank() == 0:
            print(f"step {step}: loss {loss.item():.4f}")
    dist.destroy_process_group()

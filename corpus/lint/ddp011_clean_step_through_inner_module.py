"""A nowcasting diffusion trainer whose loss helper runs the denoiser's own method on the
module inside the DDP wrapper. The wrapper's forward never runs, so DDP expects no
backward and the backward all-reduces nothing: a batch whose loss is not finite, skipped
on one rank, leaves no rank waiting (the bypass itself, which trains the replicas apart,
is DDP026's finding)."""

import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler


def compute_loss(model, batch, device):
    frames, target = batch["frames"].to(device), batch["target"].to(device)
    steps = torch.randint(model.module.timesteps, (frames.shape[0],), device=device)
    return model.module.p_losses(target, frames, steps)  # expect: DDP026


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    data = torch.load("satellite_sequences.pt")
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=4, sampler=sampler)
    model = DDP(torch.load("denoiser.pt").to(device), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for epoch in range(50):
        sampler.set_epoch(epoch)
        for batch in loader:
            optimizer.zero_grad()
            loss = compute_loss(model, batch, device)
            if not torch.isfinite(loss):
                continue
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

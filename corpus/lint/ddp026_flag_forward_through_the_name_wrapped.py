"""The wrapper is kept under its own name, `ddp_model`, but the training step calls the
model it was made around: DDP's forward never runs, so no gradient is ever all-reduced."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main():
    dist.init_process_group("nccl")
    rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(rank)
    data = TensorDataset(torch.randn(2048, 1, 32, 32), torch.randn(2048, 1, 64, 64))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=16, sampler=sampler)
    model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.PixelShuffle(2)).to(rank)
    ddp_model = DDP(model, device_ids=[rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    loss_fn = nn.L1Loss()
    for epoch in range(20):
        ddp_model.train()
        sampler.set_epoch(epoch)
        for low, high in loader:
            output = model(low.to(rank))  # expect: DDP026
            loss = loss_fn(output, high.to(rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

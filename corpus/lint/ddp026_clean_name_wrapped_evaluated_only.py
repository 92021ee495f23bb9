"""The wrapper is kept under its own name, `ddp_model`, and the training step calls it;
the model it was made around is only evaluated, under `no_grad`, after each epoch."""
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
            output = ddp_model(low.to(rank))
            loss = loss_fn(output, high.to(rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        model.eval()
        with torch.no_grad():
            print(epoch, loss_fn(model(low.to(rank)), high.to(rank)).item())
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

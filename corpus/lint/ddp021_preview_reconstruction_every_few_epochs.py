"""Autoencoder training; rank 0 renders a reconstruction preview every few epochs through
the wrapper, whose forward broadcasts the registered buffer. That one broadcast pairs with
the other ranks' next collective, the broadcast of their next epoch's first training
forward: harmless as long as the last epoch renders no preview, which the schedule decides
(unproven)."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

EPOCHS = 20
PREVIEW_EVERY = 5


def is_main_process():
    return dist.get_rank() == 0


class AutoEncoder(nn.Module):
    def __init__(self, dim=784, hidden=64):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(dim, hidden), nn.ReLU())
        self.decoder = nn.Linear(hidden, dim)
        self.register_buffer("pixel_mean", torch.zeros(dim))

    def forward(self, x):
        return self.decoder(self.encoder(x - self.pixel_mean)) + self.pixel_mean


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend="nccl")

    data = TensorDataset(torch.rand(4096, 784))
    fixed_batch = data.tensors[0][:16].cuda(local_rank)

    net = AutoEncoder().cuda(local_rank)
    ae = DistributedDataParallel(net, device_ids=[local_rank])
    optimizer = torch.optim.Adam(ae.parameters(), lr=1e-3)
    scaler = torch.cuda.amp.GradScaler()

    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=128, sampler=sampler, pin_memory=True)

    for epoch in range(EPOCHS):
        sampler.set_epoch(epoch)
        for (x,) in loader:
            x = x.cuda(local_rank, non_blocking=True)
            with torch.autocast("cuda", dtype=torch.float16):
                loss = nn.functional.mse_loss(ae(x), x)
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        if epoch % PREVIEW_EVERY == 0 and is_main_process():
            with torch.no_grad():
                recon = ae(fixed_batch)  # expect-preview: DDP021
            torch.save(recon.cpu(), f"preview_{epoch}.pt.tmp")
            os.replace(f"preview_{epoch}.pt.tmp", f"preview_{epoch}.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

"""Denoising-autoencoder pre-training under torchrun: rank 0 keeps the wrapper's state dict
as the run's result. The project's export script loads that file into a bare encoder as
it is: `load_state_dict` fails on the `module.` keys."""

import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(128, 256), nn.ReLU(), nn.Linear(256, 64))
        self.decoder = nn.Linear(64, 128)

    def forward(self, x):
        return self.decoder(self.body(x + 0.1 * torch.randn_like(x)))


def run(epochs=20):
    rank = int(os.environ["RANK"])
    device = torch.device("cuda", int(os.environ["LOCAL_RANK"]))
    torch.cuda.set_device(device)
    dist.init_process_group("nccl")
    signals = TensorDataset(torch.load("signals.pt"))
    sampler = DistributedSampler(signals, drop_last=True)
    batches = DataLoader(signals, batch_size=512, sampler=sampler)
    net = DDP(Encoder().to(device), device_ids=[device.index])
    opt = torch.optim.Adam(net.parameters(), lr=3e-4)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for (x,) in batches:
            x = x.to(device)
            loss = (net(x) - x).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    if rank == 0:
        torch.save({"encoder": net.state_dict()}, "dae_encoder.pth")  # expect: DDP006
    dist.destroy_process_group()


if __name__ == "__main__":
    run()

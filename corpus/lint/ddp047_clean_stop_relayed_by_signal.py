"""Early stopping decided on rank 0 and relayed to every rank: rank 0's decision is packed
into a tensor, broadcast, and each rank sets its own flag from what it received before
the loop is left. Every rank leaves at the same epoch."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class Patience:
    def __init__(self, limit):
        self.limit, self.best, self.waited = limit, float("inf"), 0

    def __call__(self, loss):
        if loss < self.best:
            self.best, self.waited = loss, 0
        else:
            self.waited += 1
        return self.waited >= self.limit


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)
    volumes = TensorDataset(torch.randn(512, 1, 16, 16, 16), torch.randn(512, 1, 16, 16, 16))
    sampler = DistributedSampler(volumes, shuffle=True, drop_last=True)
    loader = DataLoader(volumes, batch_size=4, sampler=sampler)
    held_out = TensorDataset(torch.randn(64, 1, 16, 16, 16), torch.randn(64, 1, 16, 16, 16))
    net = nn.Sequential(nn.Conv3d(1, 8, 3, padding=1), nn.ReLU(), nn.Conv3d(8, 1, 3, padding=1))
    model = DDP(net.to(device), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    patience = Patience(5)
    for epoch in range(200):
        sampler.set_epoch(epoch)
        model.train()
        for scans, masks in loader:
            loss = nn.functional.mse_loss(model(scans.to(device)), masks.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        stop = False
        if dist.get_rank() == 0:
            with torch.no_grad():
                scans, masks = held_out.tensors
                val = nn.functional.mse_loss(model.module(scans.to(device)), masks.to(device))
            stop = patience(val.item())
        signal = torch.tensor(1.0 if stop else 0.0, device=device)
        dist.broadcast(signal, src=0)
        if signal.item() == 1.0:
            stop = True
        if stop:
            break
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

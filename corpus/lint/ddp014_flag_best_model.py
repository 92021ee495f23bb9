"""Best-model tracking: best.pt is rewritten in place whenever validation improves."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class Tracker:
    def __init__(self, out_dir):
        self.out_dir = out_dir
        self.best = float("inf")

    def update(self, model, val_loss):
        if val_loss < self.best:
            self.best = val_loss
            torch.save(model.module.state_dict(), f"{self.out_dir}/best.pt")  # expect-preview: DDP014


@torch.no_grad()
def validate(model, loader, device):
    total = torch.zeros(2, device=device)
    for x, y in loader:
        total[0] += nn.functional.mse_loss(model.module(x.to(device)), y.to(device), reduction="sum")
        total[1] += y.numel()
    dist.all_reduce(total)
    return (total[0] / total[1]).item()


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    dist.init_process_group("nccl")
    blob = torch.load("series.pt")
    train_set = TensorDataset(blob["train_x"], blob["train_y"])
    val_set = TensorDataset(blob["val_x"], blob["val_y"])
    model = DDP(nn.Linear(48, 1).to(device), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    sampler = DistributedSampler(train_set, drop_last=True)
    loader = DataLoader(train_set, batch_size=64, sampler=sampler)
    val_loader = DataLoader(val_set, batch_size=128, sampler=DistributedSampler(val_set, shuffle=False))  # expect-preview: DDP003
    tracker = Tracker("runs/forecast")
    for epoch in range(25):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x.to(device)), y.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        val_loss = validate(model, val_loader, device)
        if dist.get_rank() == 0:
            tracker.update(model, val_loss)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

"""The meter is all-reduced over the ranks before its average is read."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class AverageMeter:
    def __init__(self):
        self.sum = 0.0
        self.count = 0

    def update(self, value, n=1):
        self.sum += value * n
        self.count += n

    def all_reduce(self, device):
        totals = torch.tensor([self.sum, self.count], dtype=torch.float64, device=device)
        dist.all_reduce(totals)
        self.sum, self.count = totals.tolist()

    @property
    def avg(self):
        return self.sum / max(self.count, 1)


def validate(val_loader, model, device):
    loss_meter = AverageMeter()
    model.eval()
    with torch.no_grad():
        for x, y in val_loader:
            loss = nn.functional.mse_loss(model(x.to(device)), y.to(device))
            loss_meter.update(loss.item(), x.size(0))
    loss_meter.all_reduce(device)
    return loss_meter.avg


def main(epochs=30):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)
    train_set = TensorDataset(torch.randn(2048, 16), torch.randn(2048, 1))
    val_set = TensorDataset(torch.randn(512, 16), torch.randn(512, 1))
    sampler = DistributedSampler(train_set, drop_last=True)
    train_loader = DataLoader(train_set, batch_size=32, sampler=sampler)
    val_loader = DataLoader(val_set, batch_size=32, sampler=DistributedSampler(val_set, shuffle=False, drop_last=True))
    model = DDP(nn.Linear(16, 1).to(device), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    best = float("inf")
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        model.train()
        for x, y in train_loader:
            loss = nn.functional.mse_loss(model(x.to(device)), y.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        val_loss = validate(val_loader, model, device)
        if val_loss < best and dist.get_rank() == 0:
            best = val_loss
            torch.save(model.module.state_dict(), "best.tmp")
            os.replace("best.tmp", "best.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

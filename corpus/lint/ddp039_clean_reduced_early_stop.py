"""Early stopping on a validation loss all-reduced across ranks: every rank sees the same
value and stops at the same epoch."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    totals = torch.zeros(2, device=device)
    for x, y in loader:
        totals[0] += nn.functional.mse_loss(model(x.to(device)), y.to(device), reduction="sum")
        totals[1] += len(y)
    dist.all_reduce(totals)
    model.train()
    return (totals[0] / totals[1]).item()


def main(epochs=300, patience=8):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)
    train_set = TensorDataset(torch.randn(5000, 9), torch.randn(5000, 1))
    val_set = TensorDataset(torch.randn(1000, 9), torch.randn(1000, 1))
    sampler = DistributedSampler(train_set, drop_last=True)
    loader = DataLoader(train_set, batch_size=50, sampler=sampler)
    val_loader = DataLoader(val_set, batch_size=50, sampler=DistributedSampler(val_set, shuffle=False, drop_last=True))
    model = DDP(nn.Linear(9, 1).to(device), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    best, bad = float("inf"), 0
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x.to(device)), y.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        val_loss = evaluate(model, val_loader, device)
        if val_loss < best:
            best, bad = val_loss, 0
        else:
            bad += 1
        if bad >= patience:
            break
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

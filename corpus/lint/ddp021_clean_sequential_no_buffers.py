"""Tabular regressor; rank 0 reports the validation error through the DDP wrapper.

The model is an `nn.Sequential` of Linear, GELU and LayerNorm layers: it has no buffers, so
with gradients off DDP's forward has nothing to broadcast and rank 0 evaluating alone issues
no collective.
"""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def validation_error(net, loader, device):
    total, count = 0.0, 0
    with torch.no_grad():
        for x, y in loader:
            pred = net(x.to(device)).squeeze(-1)
            total += (pred - y.to(device)).pow(2).sum().item()
            count += y.numel()
    return total / count


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)

    x = torch.randn(20000, 32)
    y = x[:, :4].sum(dim=1)
    train_set = TensorDataset(x[:18000], y[:18000])
    val_loader = DataLoader(TensorDataset(x[18000:], y[18000:]), batch_size=512)
    sampler = DistributedSampler(train_set)
    loader = DataLoader(train_set, batch_size=128, sampler=sampler)

    hidden = 256
    model = nn.Sequential(
        nn.Linear(32, hidden), nn.GELU(), nn.LayerNorm(hidden), nn.Dropout(0.1), nn.Linear(hidden, 1)
    )
    model = DDP(model.to(device), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)

    for epoch in range(20):
        sampler.set_epoch(epoch)
        model.train()
        for xb, yb in loader:
            loss = nn.functional.mse_loss(model(xb.to(device)).squeeze(-1), yb.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            model.eval()
            print(f"epoch {epoch}: val mse {validation_error(model, val_loader, device):.4f}")

    dist.destroy_process_group()


if __name__ == "__main__":
    main()

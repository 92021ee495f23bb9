"""Early stopping on each rank's own validation shard: a patience counter decides the
`break`, and the validation loss is never combined across ranks."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def train_one_epoch(model, loader, optimizer, device):
    model.train()
    for x, y in loader:
        loss = nn.functional.mse_loss(model(x.to(device)), y.to(device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def evaluate(model, loader, device):
    model.eval()
    total = 0.0
    with torch.no_grad():
        for x, y in loader:
            total += nn.functional.mse_loss(model(x.to(device)), y.to(device)).item()
    return total / max(len(loader), 1)


def main(epochs=200, patience=10):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)
    train_set = TensorDataset(torch.randn(8000, 7), torch.randn(8000, 1))
    val_set = TensorDataset(torch.randn(2000, 7), torch.randn(2000, 1))
    sampler = DistributedSampler(train_set, drop_last=True)
    train_loader = DataLoader(train_set, batch_size=128, sampler=sampler)
    val_loader = DataLoader(val_set, batch_size=128, sampler=DistributedSampler(val_set, shuffle=False, drop_last=True))
    model = DDP(nn.Linear(7, 1).to(device), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    best, waited = float("inf"), 0
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        train_one_epoch(model, train_loader, optimizer, device)
        val_loss = evaluate(model, val_loader, device)
        if val_loss < best:  # expect: DDP038
            best, waited = val_loss, 0
        else:
            waited += 1
        if waited >= patience:
            break  # expect: DDP039
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

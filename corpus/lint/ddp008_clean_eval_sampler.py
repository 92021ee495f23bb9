"""Training and evaluation loaders; the eval sampler keeps order, shuffle stays off."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def loaders(train_set, val_set, batch_size):
    train_sampler = DistributedSampler(train_set, shuffle=True, drop_last=True)
    val_sampler = DistributedSampler(val_set, shuffle=False)  # expect-preview: DDP003
    train_loader = DataLoader(train_set, batch_size=batch_size, sampler=train_sampler)
    val_loader = DataLoader(val_set, batch_size=batch_size * 2, shuffle=False, sampler=val_sampler)
    return train_loader, val_loader, train_sampler


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    correct = torch.zeros(2, device=device)
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        pred = model.module(x).argmax(dim=1)
        correct[0] += (pred == y).sum()
        correct[1] += y.numel()
    dist.all_reduce(correct)
    model.train()
    return (correct[0] / correct[1]).item()


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    dist.init_process_group("nccl")
    blob = torch.load("splits.pt")
    train_set = TensorDataset(blob["train_x"], blob["train_y"])
    val_set = TensorDataset(blob["val_x"], blob["val_y"])
    model = DDP(nn.Linear(20, 5).to(device), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    train_loader, val_loader, sampler = loaders(train_set, val_set, 128)
    for epoch in range(8):
        sampler.set_epoch(epoch)
        for x, y in train_loader:
            x, y = x.to(device), y.to(device)
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        accuracy = evaluate(model, val_loader, device)
        if dist.get_rank() == 0:
            print(f"epoch {epoch}: val accuracy {accuracy:.3f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

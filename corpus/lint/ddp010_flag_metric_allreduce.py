"""Validation metrics reduced inside the rank-0 logging block, and a logging group made on rank 0."""
import os

import torch
import torch.distributed as D
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


@torch.no_grad()
def local_accuracy(model, loader, device):
    model.eval()
    stats = torch.zeros(2, device=device)
    for x, y in loader:
        pred = model.module(x.to(device)).argmax(dim=1)
        stats[0] += (pred == y.to(device)).sum()
        stats[1] += y.numel()
    model.train()
    return stats


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    D.init_process_group("nccl")
    blob = torch.load("mnist.pt")
    train_set = TensorDataset(blob["train_x"], blob["train_y"])
    val_set = TensorDataset(blob["val_x"], blob["val_y"])
    model = DDP(nn.Sequential(nn.Flatten(), nn.Linear(784, 10)).to(device), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    train_sampler = DistributedSampler(train_set, drop_last=True)
    train_loader = DataLoader(train_set, batch_size=128, sampler=train_sampler)
    val_loader = DataLoader(val_set, batch_size=256, sampler=DistributedSampler(val_set, shuffle=False))
    if local_rank == 0:
        log_group = D.new_group(backend="gloo")  # expect: DDP010
        print("logging through", log_group)
    for epoch in range(5):
        train_sampler.set_epoch(epoch)
        for x, y in train_loader:
            loss = nn.functional.cross_entropy(model(x.to(device)), y.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        stats = local_accuracy(model, val_loader, device)
        if local_rank == 0:
            D.all_reduce(stats, op=D.ReduceOp.SUM)  # expect: DDP010
            print(f"epoch {epoch}: accuracy {(stats[0] / stats[1]).item():.4f}")
    D.destroy_process_group()


if __name__ == "__main__":
    main()

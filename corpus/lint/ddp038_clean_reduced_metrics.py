"""Evaluation sums loss and counts on each rank and combines them before anyone uses
them: in the evaluation function, or in the caller through a reducing helper."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def reduce_sum(values, device):
    totals = torch.tensor(values, device=device, dtype=torch.float64)
    dist.all_reduce(totals)
    return totals.tolist()


@torch.no_grad()
def shard_totals(model, loader, device):
    model.eval()
    loss_sum, count = 0.0, 0
    for x, y in loader:
        loss_sum += nn.functional.cross_entropy(model(x.to(device)), y.to(device), reduction="sum").item()
        count += len(y)
    return loss_sum, count


@torch.no_grad()
def accuracy(model, loader, device):
    model.eval()
    stats = torch.zeros(2, device=device)
    for x, y in loader:
        pred = model(x.to(device)).argmax(1)
        stats[0] += (pred == y.to(device)).sum()
        stats[1] += len(y)
    dist.all_reduce(stats)
    return (stats[0] / stats[1]).item()


def main(epochs=8):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)
    train_set = TensorDataset(torch.randn(4096, 10), torch.randint(0, 4, (4096,)))
    val_set = TensorDataset(torch.randn(1024, 10), torch.randint(0, 4, (1024,)))
    sampler = DistributedSampler(train_set, drop_last=True)
    train_loader = DataLoader(train_set, batch_size=64, sampler=sampler)
    val_loader = DataLoader(val_set, batch_size=64, sampler=DistributedSampler(val_set, shuffle=False, drop_last=True))
    model = DDP(nn.Linear(10, 4).to(device), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    best = float("inf")
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        model.train()
        for x, y in train_loader:
            loss = nn.functional.cross_entropy(model(x.to(device)), y.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        loss_sum, count = reduce_sum(shard_totals(model, val_loader, device), device)
        val_loss = loss_sum / count
        acc = accuracy(model, val_loader, device)
        if dist.get_rank() == 0:
            print(f"epoch {epoch}: val loss {val_loss:.4f}, accuracy {acc:.3f}")
            if val_loss < best:
                best = val_loss
                torch.save(model.module.state_dict(), "best.tmp")
                os.replace("best.tmp", "best.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

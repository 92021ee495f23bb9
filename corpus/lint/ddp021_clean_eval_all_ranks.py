"""Every rank evaluates its shard; metrics are summed with all_reduce, rank 0 prints."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def evaluate(model, loader, device):
    model.eval()
    stats = torch.zeros(3, device=device)  # loss sum, correct, count
    with torch.no_grad():
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            logits = model(x)
            stats[0] += nn.functional.cross_entropy(logits, y, reduction="sum")
            stats[1] += (logits.argmax(1) == y).sum()
            stats[2] += y.numel()
    dist.all_reduce(stats, op=dist.ReduceOp.SUM)
    model.train()
    return (stats[0] / stats[2]).item(), (stats[1] / stats[2]).item()


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)

    train_set = TensorDataset(torch.randn(8192, 32), torch.randint(0, 4, (8192,)))
    val_set = TensorDataset(torch.randn(2048, 32), torch.randint(0, 4, (2048,)))

    model = nn.Sequential(nn.Linear(32, 128), nn.ReLU(), nn.Linear(128, 4)).to(device)
    model = DDP(model, device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)

    sampler = DistributedSampler(train_set, shuffle=True, drop_last=True)
    loader = DataLoader(train_set, batch_size=64, sampler=sampler)
    val_loader = DataLoader(val_set, batch_size=256, sampler=DistributedSampler(val_set, shuffle=False))  # expect-preview: DDP003

    for epoch in range(10):
        sampler.set_epoch(epoch)
        for x, y in loader:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        val_loss, val_acc = evaluate(model, val_loader, device)
        running = torch.tensor([loss.item()], device=device)
        dist.all_reduce(running)
        running /= dist.get_world_size()
        if dist.get_rank() == 0:
            print(f"epoch {epoch} train {running.item():.3f} val {val_loss:.3f} acc {val_acc:.3f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

"""`--test-only` reads the best weights back and returns before any training; a training
run rewrites `best_model.pth` whenever validation improves and never reads it to resume.
A torn file costs one set of best weights, so the save is only shown under --preview."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def evaluate(model, loader):
    model.eval()
    total = torch.zeros(2, device="cuda")
    with torch.no_grad():
        for x, y in loader:
            total += torch.stack([nn.functional.mse_loss(model(x.cuda()), y.cuda(), reduction="sum"), torch.tensor(float(len(x)), device="cuda")])
    dist.all_reduce(total)
    return (total[0] / total[1]).item()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--test-only", action="store_true")
    parser.add_argument("--epochs", type=int, default=100)
    args = parser.parse_args()
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    train_set = TensorDataset(torch.randn(4000, 3), torch.randn(4000, 1))
    val_set = TensorDataset(torch.randn(800, 3), torch.randn(800, 1))
    sampler = DistributedSampler(train_set)
    train_loader = DataLoader(train_set, batch_size=50, sampler=sampler)
    val_loader = DataLoader(val_set, batch_size=50, sampler=DistributedSampler(val_set, shuffle=False, drop_last=True))
    model = DDP(nn.Linear(3, 1).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    best_path = os.path.join("experiments", "best_model.pth")
    if args.test_only and os.path.exists(best_path):
        model.load_state_dict(torch.load(best_path, map_location=f"cuda:{local_rank}"))
        print(evaluate(model, val_loader))
        dist.destroy_process_group()
        return
    best = float("inf")
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        model.train()
        for x, y in train_loader:
            loss = nn.functional.mse_loss(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        val = evaluate(model, val_loader)
        if dist.get_rank() == 0 and val < best:
            best = val
            torch.save(model.state_dict(), best_path)  # expect-preview: DDP014
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

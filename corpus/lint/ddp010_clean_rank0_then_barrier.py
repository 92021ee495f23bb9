"""Rank-0 work followed by a barrier every rank reaches; metrics averaged before printing."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def reduce_mean(value, world_size):
    value = value.clone()
    dist.all_reduce(value, op=dist.ReduceOp.SUM)
    return value / world_size


def save_on_master(state, path):
    if dist.get_rank() == 0:
        tmp = path + ".tmp"
        torch.save(state, tmp)
        os.replace(tmp, path)
    dist.barrier()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=6)
    args = parser.parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    world_size = dist.get_world_size()
    blob = torch.load("train.pt")
    train_set = TensorDataset(blob["x"], blob["y"])
    model = DDP(nn.Linear(16, 4).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    sampler = DistributedSampler(train_set, shuffle=True, drop_last=True)
    loader = DataLoader(train_set, batch_size=32, sampler=sampler)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        total = torch.zeros(1, device=f"cuda:{local_rank}")
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.cuda(local_rank)), y.cuda(local_rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.detach()
        mean_loss = reduce_mean(total, world_size)
        if dist.get_rank() == 0:
            print(f"epoch {epoch} loss {mean_loss.item():.4f}")
            os.makedirs("ckpt", exist_ok=True)
        dist.barrier()
        save_on_master({"model": model.module.state_dict(), "epoch": epoch}, "ckpt/last.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

"""Predictions gathered on rank 0 (both branches call gather); a p2p handshake; a mode check."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


@torch.no_grad()
def collect_predictions(model, loader, device, rank, world_size):
    preds = torch.cat([model.module(x.to(device)).argmax(1) for (x,) in loader])
    if rank == 0:
        buckets = [torch.empty_like(preds) for _ in range(world_size)]
        dist.gather(preds, gather_list=buckets, dst=0)
        return torch.cat(buckets)
    else:
        dist.gather(preds, dst=0)
        return None


def handshake(rank, device):
    token = torch.ones(1, device=device)
    if rank == 0:
        dist.send(token, dst=1)
    elif rank == 1:
        dist.recv(token, src=0)


def main():
    local_rank = int(os.environ.get("LOCAL_RANK", -1))
    if local_rank != -1:
        torch.cuda.set_device(local_rank)
        dist.init_process_group("nccl")
    rank, world_size = dist.get_rank(), dist.get_world_size()
    device = torch.device("cuda", local_rank)
    blob = torch.load("data.pt")
    train_set = TensorDataset(blob["x"], blob["y"])
    test_set = TensorDataset(blob["test_x"])
    model = DDP(nn.Linear(10, 3).to(device), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters())
    sampler = DistributedSampler(train_set, drop_last=True)
    loader = DataLoader(train_set, batch_size=32, sampler=sampler)
    handshake(rank, device)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.to(device)), y.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    if local_rank != -1:
        dist.barrier()
    test_loader = DataLoader(test_set, batch_size=64, sampler=DistributedSampler(test_set, shuffle=False))
    preds = collect_predictions(model, test_loader, device, rank, world_size)
    if rank == 0:
        print(preds.bincount())
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

"""Evaluation helper shared by the one-GPU and the torchrun paths: the metric reduction is
tried and skipped when no process group exists; the training step itself is unguarded."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler


def mean_over_ranks(value):
    try:
        dist.all_reduce(value)
        value /= dist.get_world_size()
    except Exception:
        pass
    return value


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    dataset = torch.load("pairs.pt")
    sampler = DistributedSampler(dataset, drop_last=True)
    loader = DataLoader(dataset, batch_size=32, sampler=sampler)
    model = DDP(nn.Linear(128, 1).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(10):
        sampler.set_epoch(epoch)
        running = torch.zeros((), device="cuda")
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x.cuda()).squeeze(1), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            running += loss.detach()
        running = mean_over_ranks(running / len(loader))
        if dist.get_rank() == 0:
            print(f"epoch {epoch}: loss {running.item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

"""Keeps both ranks: the global one for logging/sharding, the local one for the device."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def log(rank, msg):
    if rank == 0:
        print(msg, flush=True)


def main():
    rank = int(os.environ["RANK"])
    local_rank = int(os.environ["LOCAL_RANK"])
    world_size = int(os.environ["WORLD_SIZE"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    device = torch.device("cuda", local_rank)

    model = nn.Linear(128, 10).to(device)
    model = DDP(model, device_ids=[local_rank], output_device=local_rank)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    data = TensorDataset(torch.randn(8192, 128), torch.randint(0, 10, (8192,)))
    sampler = DistributedSampler(data, num_replicas=world_size, rank=rank, drop_last=True)
    loader = DataLoader(data, batch_size=128, sampler=sampler)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for x, y in loader:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        total = torch.tensor([loss.item()], device=device)
        dist.all_reduce(total)
        log(rank, f"epoch {epoch}: mean loss {total.item() / world_size:.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

"""Rank 0 draws a fresh seed and broadcasts it: every rank builds its sampler with the
same value, whatever the rank offsets used elsewhere."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def shared_seed(device):
    seed = torch.randint(0, 2**31 - 1, (1,), device=device)
    dist.broadcast(seed, src=0)
    return int(seed.item())


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    device = torch.device("cuda", local_rank)
    torch.cuda.set_device(device)
    dist.init_process_group("nccl")
    seed = shared_seed(device)
    torch.manual_seed(seed + local_rank)

    dataset = TensorDataset(torch.randn(6000, 20), torch.randint(0, 2, (6000,)))
    sampler = DistributedSampler(dataset, seed=seed, drop_last=True)
    loader = DataLoader(dataset, batch_size=100, sampler=sampler)
    model = DDP(nn.Linear(20, 2).to(device), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(8):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.to(device)), y.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

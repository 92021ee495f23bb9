"""Reads RANK from the environment and uses it as the GPU index (fine on one node; nothing
here says it runs on a second one, so the finding is shown under --preview)."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main():
    rank = int(os.environ["RANK"])
    world_size = int(os.environ["WORLD_SIZE"])
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    torch.cuda.set_device(rank)  # expect-preview: DDP018

    model = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 8)).cuda(rank)  # expect-preview: DDP018
    model = DDP(model, device_ids=[rank])  # expect-preview: DDP018
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)

    data = TensorDataset(torch.randn(4096, 64), torch.randint(0, 8, (4096,)))
    sampler = DistributedSampler(data, num_replicas=world_size, rank=rank, shuffle=True,
                                 drop_last=True)
    loader = DataLoader(data, batch_size=64, sampler=sampler)
    for epoch in range(10):
        sampler.set_epoch(epoch)
        for x, y in loader:
            x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if rank == 0:
            print(f"epoch {epoch} loss {loss.item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

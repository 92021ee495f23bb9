"""Explicit sampler arguments taken from the process group (global rank, world size)."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    world_size = dist.get_world_size()
    gpus_here = torch.cuda.device_count()
    if rank == 0:
        print(f"{world_size} processes, {gpus_here} GPUs on this node")

    model = DDP(nn.Linear(32, 4).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    data = TensorDataset(torch.randn(8192, 32), torch.randint(0, 4, (8192,)))
    val = TensorDataset(torch.randn(1024, 32), torch.randint(0, 4, (1024,)))
    sampler = DistributedSampler(data, num_replicas=world_size, rank=rank, drop_last=True)
    val_sampler = DistributedSampler(val, num_replicas=dist.get_world_size(),  # expect-preview: DDP003
                                     rank=dist.get_rank(), shuffle=False)
    loader = DataLoader(data, batch_size=64, sampler=sampler)
    val_loader = DataLoader(val, batch_size=128, sampler=val_sampler)
    for epoch in range(4):
        sampler.set_epoch(epoch)
        for x, y in loader:
            x, y = x.cuda(local_rank), y.cuda(local_rank)
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        seen = torch.zeros(1, device=torch.device("cuda", local_rank))
        for x, _ in val_loader:
            seen += x.shape[0]
        dist.all_reduce(seen)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

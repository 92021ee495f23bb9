"""Shards the data by the helper's rank: the helper returns dist.get_rank(), the rank the
sampler wants, whatever its name says."""

import os

import torch
import torch.distributed as dist
import torch.nn as nn
from comm import get_local_rank, get_world_size
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main():
    dist.init_process_group("nccl")
    gpu = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(gpu)
    model = DDP(nn.Linear(16, 2).cuda(gpu), device_ids=[gpu])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    data = TensorDataset(torch.randn(2048, 16), torch.randint(0, 2, (2048,)))
    sampler = DistributedSampler(
        data, num_replicas=get_world_size(), rank=get_local_rank(), drop_last=True
    )
    loader = DataLoader(data, batch_size=32, sampler=sampler)
    for epoch in range(4):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.cuda(gpu)), y.cuda(gpu))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

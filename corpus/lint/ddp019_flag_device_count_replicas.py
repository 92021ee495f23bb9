"""Sizes the sampler by the GPUs of this machine instead of the world size."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def make_loader(dataset, batch_size):
    ngpus = torch.cuda.device_count()
    sampler = DistributedSampler(dataset, num_replicas=ngpus, rank=dist.get_rank(),  # expect: DDP019
                                 shuffle=True, drop_last=True)
    return sampler, DataLoader(dataset, batch_size=batch_size // ngpus, sampler=sampler)  # expect: DDP029


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = DDP(nn.Linear(16, 2).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    data = TensorDataset(torch.randn(4096, 16), torch.randint(0, 2, (4096,)))
    sampler, loader = make_loader(data, 512)
    for epoch in range(5):
        sampler.set_epoch(epoch)
        for x, y in loader:
            x, y = x.cuda(local_rank), y.cuda(local_rank)
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

"""NCCL for the model's gradients, plus a gloo group for gathering Python objects (file
names of the samples each rank scored) on the CPU."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main():
    dist.init_process_group("nccl")
    cpu_group = dist.new_group(backend="gloo")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    data = TensorDataset(torch.randn(3000, 10), torch.randint(0, 2, (3000,)))
    sampler = DistributedSampler(data, drop_last=True)
    loader = DataLoader(data, batch_size=30, sampler=sampler)
    model = DDP(nn.Linear(10, 2).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for x, y in loader:
            x, y = x.cuda(local_rank), y.cuda(local_rank)
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    names = [f"rank{dist.get_rank()}-done"]
    gathered = [None] * dist.get_world_size()
    dist.all_gather_object(gathered, names, group=cpu_group)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

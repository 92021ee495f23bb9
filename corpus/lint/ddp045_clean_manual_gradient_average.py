"""The tutorial's hand-written data parallelism: gradients averaged with all_reduce after
each backward, so the replicas stay identical without a DDP wrapper."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def average_gradients(model):
    size = float(dist.get_world_size())
    for param in model.parameters():
        dist.all_reduce(param.grad.data, op=dist.ReduceOp.SUM)
        param.grad.data /= size


def run():
    dist.init_process_group("gloo")
    torch.manual_seed(1234)
    model = nn.Linear(20, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.5)
    data = TensorDataset(torch.randn(1024, 20), torch.randint(0, 2, (1024,)))
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=32, sampler=sampler)
    for epoch in range(10):
        sampler.set_epoch(epoch)
        for x, y in loader:
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(x), y)
            loss.backward()
            average_gradients(model)
            optimizer.step()
    if dist.get_rank() == 0:
        torch.save(model.state_dict(), "model.pt.tmp")
        os.replace("model.pt.tmp", "model.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    run()

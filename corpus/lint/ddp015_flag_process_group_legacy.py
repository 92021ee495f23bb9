"""Legacy launcher: torchrun starts the processes, but the model is still wrapped in
DataParallel (left over from the single-process version of the script)."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def average_gradients(model):
    world_size = dist.get_world_size()
    for param in model.parameters():
        if param.grad is not None:
            dist.all_reduce(param.grad)
            param.grad /= world_size


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")

    dataset = TensorDataset(torch.randn(8192, 32), torch.randint(0, 2, (8192,)))
    sampler = DistributedSampler(dataset, shuffle=True, drop_last=True)
    loader = DataLoader(dataset, batch_size=128, sampler=sampler, num_workers=2)

    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 2)).cuda(local_rank)
    model = torch.nn.parallel.DataParallel(model)  # expect: DDP015
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    for epoch in range(5):
        sampler.set_epoch(epoch)
        for x, y in loader:
            x, y = x.cuda(local_rank), y.cuda(local_rank)
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            average_gradients(model)
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

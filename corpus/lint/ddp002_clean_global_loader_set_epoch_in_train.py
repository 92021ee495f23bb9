"""Module-global loaders read by `train(epoch)`, which tells the global sampler the epoch
before iterating: every epoch gets a new order."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def train(epoch):
    net.train()
    train_sampler.set_epoch(epoch)
    for images, labels in train_loader:
        images, labels = images.cuda(), labels.cuda()
        loss = criterion(net(images), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend="nccl")
    data = TensorDataset(torch.randn(4096, 3, 32, 32), torch.randint(0, 10, (4096,)))
    train_sampler = DistributedSampler(data)
    train_loader = DataLoader(data, batch_size=64, sampler=train_sampler)
    net = DistributedDataParallel(
        nn.Sequential(nn.Flatten(), nn.Linear(3 * 32 * 32, 10)).cuda(), device_ids=[local_rank]
    )
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    for epoch in range(30):
        train(epoch)
    dist.destroy_process_group()

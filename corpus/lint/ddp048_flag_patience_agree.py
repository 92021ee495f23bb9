"""Image classifier with patience-based stopping on each rank's own validation shard."""

import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler
from torchvision import datasets, transforms


def agree_to_stop(stop, world_size):
    if world_size == 1:
        return stop
    votes = torch.tensor([1.0 if stop else 0.0], device="cuda")
    dist.all_reduce(votes)
    return votes.item() >= 1.0


@torch.no_grad()
def shard_loss(net, loader, device):
    total, count = 0.0, 0
    for images, labels in loader:
        images, labels = images.to(device), labels.to(device)
        total += nn.functional.cross_entropy(net(images), labels, reduction="sum").item()
        count += len(labels)
    return total / max(count, 1)


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    world_size = dist.get_world_size()
    device = torch.device("cuda", local_rank)
    net = nn.Sequential(nn.Flatten(), nn.Linear(28 * 28, 256), nn.ReLU(), nn.Linear(256, 10))
    model = DDP(net.to(device), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    tf = transforms.ToTensor()
    train_set = datasets.FashionMNIST("data", train=True, transform=tf)
    val_set = datasets.FashionMNIST("data", train=False, transform=tf)
    sampler = DistributedSampler(train_set, shuffle=True, drop_last=True)
    loader = DataLoader(train_set, batch_size=128, sampler=sampler)
    val_loader = DataLoader(
        val_set, batch_size=256, sampler=DistributedSampler(val_set, shuffle=False)
    )
    best, bad_epochs = float("inf"), 0
    for epoch in range(100):
        sampler.set_epoch(epoch)
        for images, labels in loader:
            images, labels = images.to(device), labels.to(device)
            loss = nn.functional.cross_entropy(model(images), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        val_loss = shard_loss(model.module, val_loader, device)
        if val_loss < best:
            best, bad_epochs = val_loss, 0
        else:
            bad_epochs += 1
        stop = bad_epochs >= 5
        agree_to_stop(stop, world_size)  # expect: DDP048
        if stop:
            break
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

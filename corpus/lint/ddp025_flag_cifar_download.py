"""CIFAR-10 training; every rank downloads the dataset into the same root."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torchvision
import torchvision.transforms as T
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler


def build_datasets(root):
    train_tf = T.Compose([T.RandomCrop(32, padding=4), T.RandomHorizontalFlip(), T.ToTensor()])
    test_tf = T.ToTensor()
    train = torchvision.datasets.CIFAR10(root=root, train=True, download=True, transform=train_tf)  # expect: DDP025
    test = torchvision.datasets.CIFAR10(root=root, train=False, download=True, transform=test_tf)  # expect: DDP025
    return train, test


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="./data")
    parser.add_argument("--epochs", type=int, default=30)
    args = parser.parse_args()

    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)

    train_set, test_set = build_datasets(args.data)
    net = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                        nn.Flatten(), nn.Linear(64, 10))
    model = DDP(net.to(device), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4)
    sampler = DistributedSampler(train_set, shuffle=True, drop_last=True)
    loader = DataLoader(train_set, batch_size=128, sampler=sampler, num_workers=4)
    test_loader = DataLoader(test_set, batch_size=256, sampler=DistributedSampler(test_set, shuffle=False))  # expect-preview: DDP003

    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        correct = torch.zeros(2, device=device)
        with torch.no_grad():
            for x, y in test_loader:
                pred = model(x.to(device)).argmax(1)
                correct += torch.stack([(pred == y.to(device)).sum(), torch.tensor(y.numel(), device=device)])
        dist.all_reduce(correct)
        if dist.get_rank() == 0:
            print(f"epoch {epoch}: test acc {(correct[0] / correct[1]).item():.3f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

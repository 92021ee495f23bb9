"""A slide-tile encoder trained with a BatchNorm CNN: every fifth epoch rank 0 alone
evaluates through the wrapper under no_grad. Its one buffer broadcast pairs with the other
ranks' next collective, the buffer broadcast of their next epoch's first training forward,
so training goes on; only an evaluation in the very last epoch would be left unmatched,
which the schedule here never makes (unknown statically)."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def train_one_epoch(model, loader, optimizer, device):
    model.train()
    for tiles, labels in loader:
        loss = nn.functional.cross_entropy(model(tiles.to(device)), labels.to(device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def evaluate(model, loader, device):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for tiles, labels in loader:
            predictions = model(tiles.to(device)).argmax(1)  # expect-preview: DDP021
            correct += (predictions.cpu() == labels).sum().item()
            total += labels.numel()
    return correct / total


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    train_set = TensorDataset(torch.randn(2048, 3, 64, 64), torch.randint(0, 4, (2048,)))
    val_set = TensorDataset(torch.randn(256, 3, 64, 64), torch.randint(0, 4, (256,)))
    sampler = DistributedSampler(train_set)
    train_loader = DataLoader(train_set, batch_size=32, sampler=sampler, drop_last=True)
    val_loader = DataLoader(val_set, batch_size=64)
    net = nn.Sequential(
        nn.Conv2d(3, 32, 3), nn.BatchNorm2d(32), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 4)
    )
    model = DDP(net.to(device), device_ids=[local_rank])  # expect: DDP017
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    for epoch in range(90):
        sampler.set_epoch(epoch)
        train_one_epoch(model, train_loader, optimizer, device)
        if dist.get_rank() == 0 and epoch % 5 == 0:
            print(f"epoch {epoch}: accuracy {evaluate(model, val_loader, device):.3f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

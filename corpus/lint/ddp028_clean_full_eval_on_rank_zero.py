"""Rank 0 evaluates the bare model on the whole test set with a plain loader: its count
covers every sample, so dividing by the dataset size is right."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def test(model, loader, device):
    model.eval()
    correct = 0
    with torch.no_grad():
        for x, y in loader:
            correct += (model(x.to(device)).argmax(1) == y.to(device)).sum().item()
    return correct / len(loader.dataset)


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    device = torch.device("cuda", local_rank)
    torch.cuda.set_device(device)
    dist.init_process_group("nccl")
    train_set = TensorDataset(torch.randn(4000, 16), torch.randint(0, 2, (4000,)))
    test_set = TensorDataset(torch.randn(1000, 16), torch.randint(0, 2, (1000,)))
    sampler = DistributedSampler(train_set, drop_last=True)
    train_loader = DataLoader(train_set, batch_size=40, sampler=sampler)
    test_loader = DataLoader(test_set, batch_size=100)
    model = DDP(nn.Linear(16, 2).to(device), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    for epoch in range(6):
        sampler.set_epoch(epoch)
        model.train()
        for x, y in train_loader:
            loss = nn.functional.cross_entropy(model(x.to(device)), y.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            print(f"epoch {epoch} test accuracy {test(model.module, test_loader, device):.3f}")
        dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

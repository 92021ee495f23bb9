"""The helper returns this rank's share of the accuracy (its count over the whole dataset
size); the caller sums the shares over the ranks, which gives the accuracy."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


@torch.no_grad()
def accuracy_share(model, loader, device):
    correct = 0
    for x, y in loader:
        correct += (model(x.to(device)).argmax(1) == y.to(device)).sum().item()
    return correct / len(loader.dataset)


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    device = torch.device("cuda", local_rank)
    torch.cuda.set_device(device)
    dist.init_process_group("nccl")
    train_set = TensorDataset(torch.randn(4000, 16), torch.randint(0, 2, (4000,)))
    val_set = TensorDataset(torch.randn(1000, 16), torch.randint(0, 2, (1000,)))
    sampler = DistributedSampler(train_set, drop_last=True)
    train_loader = DataLoader(train_set, batch_size=40, sampler=sampler)
    val_loader = DataLoader(val_set, batch_size=100, sampler=DistributedSampler(val_set, shuffle=False))
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
        model.eval()
        share = torch.tensor(accuracy_share(model, val_loader, device), device=device)
        dist.all_reduce(share, op=dist.ReduceOp.SUM)
        if dist.get_rank() == 0:
            print(f"epoch {epoch} accuracy {share.item():.3f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

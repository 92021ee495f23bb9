"""Validation on a sharded loader; the counts are summed over the ranks before dividing."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


@torch.no_grad()
def validate(model, loader, device):
    model.eval()
    correct = torch.zeros((), device=device)
    loss_sum = torch.zeros((), device=device)
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        out = model(x)
        loss_sum += nn.functional.cross_entropy(out, y, reduction="sum")
        correct += (out.argmax(1) == y).sum()
    dist.all_reduce(correct)
    dist.all_reduce(loss_sum)
    n = len(loader.dataset)
    return (correct / n).item(), (loss_sum / n).item()


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    device = torch.device("cuda", local_rank)
    torch.cuda.set_device(device)
    dist.init_process_group("nccl")
    train_set = TensorDataset(torch.randn(4000, 16), torch.randint(0, 2, (4000,)))
    val_set = TensorDataset(torch.randn(800, 16), torch.randint(0, 2, (800,)))
    sampler = DistributedSampler(train_set, drop_last=True)
    train_loader = DataLoader(train_set, batch_size=40, sampler=sampler)
    val_loader = DataLoader(val_set, batch_size=80, sampler=DistributedSampler(val_set, shuffle=False))  # expect-preview: DDP003
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
        acc, val_loss = validate(model, val_loader, device)
        if dist.get_rank() == 0:
            print(f"epoch {epoch}: acc {acc:.3f} loss {val_loss:.3f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

"""The evaluation helper returns the accuracy; the caller keeps the best one and prints it.
Neither combines the ranks' counts."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset
from tqdm import tqdm


def evaluate(model, loader, val_set, device):
    model.eval()
    num_val = len(val_set)
    right = 0
    with torch.no_grad():
        for step, (x, y) in enumerate(tqdm(loader, desc="eval")):
            right += (model(x.to(device)).argmax(1) == y.to(device)).sum().item()
    return right / num_val  # expect: DDP028


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    device = torch.device(f"cuda:{local_rank}")
    torch.cuda.set_device(device)
    dist.init_process_group(backend="nccl")
    train_set = TensorDataset(torch.randn(5000, 10), torch.randint(0, 3, (5000,)))
    val_set = TensorDataset(torch.randn(1000, 10), torch.randint(0, 3, (1000,)))
    sampler = DistributedSampler(train_set, drop_last=True)
    train_loader = DataLoader(train_set, batch_size=50, sampler=sampler)
    val_loader = DataLoader(val_set, batch_size=100, sampler=DistributedSampler(val_set, shuffle=False))
    model = DDP(nn.Linear(10, 3).to(device), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    best = 0.0
    for epoch in range(12):
        sampler.set_epoch(epoch)
        model.train()
        for x, y in train_loader:
            loss = nn.functional.cross_entropy(model(x.to(device)), y.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        acc = evaluate(model, val_loader, val_set, device)
        best = max(best, acc)
        print(f"rank {dist.get_rank()} epoch {epoch} acc {acc:.3f} best {best:.3f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

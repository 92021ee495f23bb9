"""The training helper sets the epoch; evaluation uses a non-shuffling sampler."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def train_one_epoch(model, loader, optimizer, epoch, local_rank):
    loader.sampler.set_epoch(epoch)
    model.train()
    for x, y in loader:
        x, y = x.cuda(local_rank), y.cuda(local_rank)
        loss = nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


@torch.no_grad()
def evaluate(model, loader, local_rank):
    model.eval()
    stats = torch.zeros(2, device=f"cuda:{local_rank}")
    for x, y in loader:
        logits = model(x.cuda(local_rank))
        stats[0] += (logits.argmax(1) == y.cuda(local_rank)).sum()
        stats[1] += len(y)
    dist.all_reduce(stats)
    return (stats[0] / stats[1]).item()


def main(epochs=15):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    train_set = TensorDataset(torch.randn(1600, 8), torch.randint(0, 2, (1600,)))
    val_set = TensorDataset(torch.randn(400, 8), torch.randint(0, 2, (400,)))
    train_sampler = DistributedSampler(train_set, drop_last=True)
    val_sampler = DistributedSampler(val_set, shuffle=False)  # expect-preview: DDP003
    train_loader = DataLoader(train_set, batch_size=32, sampler=train_sampler)
    val_loader = DataLoader(val_set, batch_size=32, sampler=val_sampler)
    model = DDP(nn.Linear(8, 2).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-4)
    for epoch in range(epochs):
        train_one_epoch(model, train_loader, optimizer, epoch, local_rank)
        for _ in range(2):
            acc = evaluate(model, val_loader, local_rank)
        if dist.get_rank() == 0:
            print(epoch, acc)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

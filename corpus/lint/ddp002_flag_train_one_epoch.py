"""Train/validate split into helpers; validation correctly uses shuffle=False."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def train_one_epoch(model, loader, optimizer, local_rank):
    model.train()
    for x, y in loader:
        x, y = x.cuda(local_rank), y.cuda(local_rank)
        loss = nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


@torch.no_grad()
def validate(model, loader, local_rank):
    model.eval()
    correct = torch.zeros(2, device=f"cuda:{local_rank}")
    for x, y in loader:
        pred = model(x.cuda(local_rank)).argmax(1)
        correct += torch.tensor([(pred == y.cuda(local_rank)).sum().item(), len(y)],
                                device=correct.device)
    dist.all_reduce(correct)
    return (correct[0] / correct[1]).item()


def main(epochs=20):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    train_set = TensorDataset(torch.randn(2000, 10), torch.randint(0, 3, (2000,)))
    val_set = TensorDataset(torch.randn(300, 10), torch.randint(0, 3, (300,)))
    train_loader = DataLoader(train_set, batch_size=64, drop_last=True,
                              sampler=DistributedSampler(train_set, shuffle=True))
    val_loader = DataLoader(val_set, batch_size=64,
                            sampler=DistributedSampler(val_set, shuffle=False))  # expect-preview: DDP003
    model = DDP(nn.Linear(10, 3).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(epochs):  # expect: DDP002
        train_one_epoch(model, train_loader, optimizer, local_rank)
        acc = validate(model, val_loader, local_rank)
        if dist.get_rank() == 0:
            print(f"epoch {epoch}: acc {acc:.3f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

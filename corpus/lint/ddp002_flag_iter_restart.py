"""Step-based training that restarts its loader's iterator when it runs out."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def fit(model, optimizer, train_loader, total_steps, device):
    data_iter = iter(train_loader)
    for step in range(total_steps):
        try:
            tokens, labels = next(data_iter)
        except StopIteration:
            data_iter = iter(train_loader)  # expect: DDP002
            tokens, labels = next(data_iter)
        logits = model(tokens.to(device))
        loss = nn.functional.cross_entropy(logits, labels.to(device))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device(f"cuda:{local_rank}")
    corpus = TensorDataset(torch.randn(8000, 32), torch.randint(0, 10, (8000,)))
    train_loader = DataLoader(
        corpus, batch_size=16, sampler=DistributedSampler(corpus, drop_last=True)
    )
    model = DDP(nn.Linear(32, 10).to(device), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    fit(model, optimizer, train_loader, 50_000, device)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

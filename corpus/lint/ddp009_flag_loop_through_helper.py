"""Regression fine-tuning whose loop body is a helper that runs backward().

The loader has no sampler and no shuffle, but every batch it yields goes to
`train_step`, which calls backward(): it is the training loader, and under DDP every rank
walks the whole dataset.
"""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset


def train_step(model, optimizer, batch, device):
    x, y = (t.to(device) for t in batch)
    loss = nn.functional.smooth_l1_loss(model(x), y)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    return loss.detach()


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    device = torch.device("cuda", local_rank)
    torch.cuda.set_device(device)
    dist.init_process_group("nccl")
    records = TensorDataset(torch.load("features.pt"), torch.load("targets.pt"))
    model = DDP(nn.Linear(128, 1).to(device), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    loader = DataLoader(records, batch_size=64, num_workers=4)  # expect: DDP009
    for epoch in range(20):
        for batch in loader:
            loss = train_step(model, optimizer, batch, device)
        if dist.get_rank() == 0:
            print(f"epoch {epoch}: last loss {loss.item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

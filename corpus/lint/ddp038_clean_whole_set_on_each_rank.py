"""Rank 0 evaluates the whole validation set (no sampler) and picks the best model."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main(epochs=10):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    train_set = TensorDataset(torch.randn(3000, 6), torch.randn(3000, 1))
    val_set = TensorDataset(torch.randn(500, 6), torch.randn(500, 1))
    sampler = DistributedSampler(train_set, drop_last=True)
    train_loader = DataLoader(train_set, batch_size=30, sampler=sampler)
    val_loader = DataLoader(val_set, batch_size=100)
    model = DDP(nn.Linear(6, 1).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    best = float("inf")
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        model.train()
        for x, y in train_loader:
            loss = nn.functional.mse_loss(model(x.cuda(local_rank)), y.cuda(local_rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            model.module.eval()
            total = 0.0
            with torch.no_grad():
                for x, y in val_loader:
                    total += nn.functional.mse_loss(model.module(x.cuda(local_rank)), y.cuda(local_rank)).item()
            if total < best:
                best = total
                torch.save(model.module.state_dict(), "best.tmp")
                os.replace("best.tmp", "best.pt")
        dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

"""Data pipeline built in a factory that returns the loader and its sampler."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler as DS


def build_dataloaders(batch_size):
    train_set = TensorDataset(torch.randn(4096, 24), torch.randn(4096, 1))
    sampler = DS(train_set, shuffle=True, seed=1234, drop_last=True)
    loader = DataLoader(train_set, batch_size=batch_size, sampler=sampler, num_workers=4)
    return loader, sampler


def run(total_epochs=30):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    loader, sampler = build_dataloaders(batch_size=32)
    model = DDP(nn.Linear(24, 1).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-4)
    for epoch_idx in range(total_epochs):  # expect: DDP002
        for step, (x, y) in enumerate(loader):
            x, y = x.cuda(local_rank), y.cuda(local_rank)
            loss = nn.functional.smooth_l1_loss(model(x), y)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
        if dist.get_rank() == 0 and epoch_idx % 10 == 0:
            print("epoch", epoch_idx, "loss", loss.item())
    dist.destroy_process_group()


if __name__ == "__main__":
    run()

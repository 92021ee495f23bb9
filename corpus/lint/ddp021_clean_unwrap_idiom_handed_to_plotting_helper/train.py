"""Forecasting training: rank 0 alone plots samples from time to time, handing the plotting
helper the model inside the DDP wrapper (`model.module if isinstance(model, DDP) else
model`), whose forward issues no collective."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

from plots import plot_forecast


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    model = nn.Sequential(nn.Linear(96, 256), nn.BatchNorm1d(256), nn.ReLU(), nn.Linear(256, 24))
    model = DDP(nn.SyncBatchNorm.convert_sync_batchnorm(model).to(device), device_ids=[local_rank])
    series = TensorDataset(torch.randn(4096, 96), torch.randn(4096, 24))
    sampler = DistributedSampler(series)
    loader = DataLoader(series, batch_size=64, sampler=sampler, drop_last=True)
    sample_loader = DataLoader(TensorDataset(torch.randn(64, 96), torch.randn(64, 24)), batch_size=16)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for step in range(20000):
        if step % len(loader) == 0:
            sampler.set_epoch(step // len(loader))
            batches = iter(loader)
        history, future = next(batches)
        loss = nn.functional.mse_loss(model(history.to(device)), future.to(device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if dist.get_rank() == 0 and step % 1000 == 0:
            plot_forecast(
                model=model.module if isinstance(model, DDP) else model,
                loader=sample_loader,
                device=device,
                step=step,
            )
            model.train()


if __name__ == "__main__":
    main()

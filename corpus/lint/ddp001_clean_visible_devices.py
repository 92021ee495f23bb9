"""SLURM launcher: one task per GPU, each task only sees its own GPU."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def setup():
    # srun --gpus-per-task=1 already restricts each task; make it explicit for safety.
    os.environ.setdefault("CUDA_VISIBLE_DEVICES", os.environ.get("SLURM_LOCALID", "0"))
    dist.init_process_group(
        "nccl",
        rank=int(os.environ["SLURM_PROCID"]),
        world_size=int(os.environ["SLURM_NTASKS"]),
    )
    torch.cuda.set_device(0)
    return torch.device("cuda:0")


def main():
    device = setup()
    model = DDP(nn.Linear(64, 8).to(device), device_ids=[0])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    data = TensorDataset(torch.randn(512, 64), torch.randn(512, 8))
    sampler = DistributedSampler(data, drop_last=True)
    loader = DataLoader(data, batch_size=32, sampler=sampler)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            loss = nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

"""A SLURM-friendly trainer that fills the launcher's variables from SLURM's when they are
missing: `os.environ.setdefault("RANK", ...)` returns the rank either way, so the
checkpoint saved under `RANK == 0` is written by one process."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

RANK = int(os.environ.setdefault("RANK", os.environ.get("SLURM_PROCID", "0")))
LOCAL_RANK = int(os.environ.setdefault("LOCAL_RANK", os.environ.get("SLURM_LOCALID", "0")))
WORLD_SIZE = int(os.environ.setdefault("WORLD_SIZE", os.environ.get("SLURM_NTASKS", "1")))


def save_checkpoint(path, model, optimizer, epoch):
    torch.save(
        {"model": model.module.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch},
        path,
    )


def main():
    torch.cuda.set_device(LOCAL_RANK)
    dist.init_process_group("nccl", rank=RANK, world_size=WORLD_SIZE)
    data = TensorDataset(torch.randn(4096, 128), torch.randint(0, 100, (4096,)))
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=64, sampler=sampler)
    model = DDP(nn.Linear(128, 100).cuda(LOCAL_RANK), device_ids=[LOCAL_RANK])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(30):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.cuda(LOCAL_RANK)), y.cuda(LOCAL_RANK))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if RANK == 0:
            save_checkpoint(f"epoch_{epoch}.pt", model, optimizer, epoch)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

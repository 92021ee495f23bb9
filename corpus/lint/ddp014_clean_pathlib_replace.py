"""Atomic checkpoint writes with pathlib: temp file, then Path.replace onto the target."""
import os
from pathlib import Path

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def atomic_save(obj, path: Path):
    tmp = path.with_suffix(path.suffix + ".tmp")
    torch.save(obj, tmp)
    tmp.replace(path)


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    blob = torch.load("train.pt")
    dataset = TensorDataset(blob["x"], blob["y"])
    model = DDP(nn.Linear(16, 4).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    sampler = DistributedSampler(dataset, drop_last=True)
    loader = DataLoader(dataset, batch_size=32, sampler=sampler)
    out = Path("runs/exp")
    out.mkdir(parents=True, exist_ok=True)
    for epoch in range(20):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.cuda(local_rank)), y.cuda(local_rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            atomic_save({"model": model.module.state_dict(), "epoch": epoch}, out / "last.pt")
            latest = os.path.join(str(out), "latest.pt")
            torch.save({"epoch": epoch}, latest + ".tmp")
            os.replace(latest + ".tmp", latest)
        dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

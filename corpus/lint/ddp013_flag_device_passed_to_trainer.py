"""A trainer function that takes its device from the caller: the device is per rank, but
the snapshot of the freshly built model goes to one shared file from every rank."""
import os
from pathlib import Path

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def fit(settings, device, out_dir):
    weights_dir = Path(out_dir) / "weights"
    weights_dir.mkdir(parents=True, exist_ok=True)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4)).to(device)
    torch.save(model, weights_dir / "init.pt")  # expect: DDP013
    model = DDP(model, device_ids=[device.index])
    optimizer = torch.optim.AdamW(model.parameters(), lr=settings["lr"])
    data = TensorDataset(torch.randn(640, 32), torch.randint(0, 4, (640,)))
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=16, sampler=sampler)
    for epoch in range(settings["epochs"]):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.to(device)), y.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    fit({"lr": 1e-3, "epochs": 5}, torch.device("cuda", local_rank), "runs/exp")
    dist.destroy_process_group()

"""A step helper that turns an OOM into a None loss; the caller carries on."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch import OutOfMemoryError
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def training_step(model, batch, optimizer, scaler, device):
    x, y = batch[0].to(device), batch[1].to(device)
    try:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = nn.functional.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
    except (OutOfMemoryError, torch.cuda.CudaError):  # expect: DDP012
        optimizer.zero_grad(set_to_none=True)
        return None
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)
    return loss.detach()


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    dist.init_process_group("nccl")
    blob = torch.load("train.pt")
    dataset = TensorDataset(blob["x"], blob["y"])
    model = DDP(nn.Linear(256, 10).to(device), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cuda")
    sampler = DistributedSampler(dataset, drop_last=True)
    loader = DataLoader(dataset, batch_size=256, sampler=sampler)
    failures = 0
    for epoch in range(10):
        sampler.set_epoch(epoch)
        for batch in loader:
            if training_step(model, batch, optimizer, scaler, device) is None:
                failures += 1
    print(f"rank {dist.get_rank()} had {failures} failed steps")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

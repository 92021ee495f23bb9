"""A regression trainer that stops the epoch once its running loss turns non-finite. The
test comes after the step's `backward()`, but the running loss is this rank's own: the rank
that sees a NaN first leaves the loop, and the others start the next step and wait in DDP's
gradient all-reduce for it."""
import math
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def run_epoch(model, loader, optimizer, scaler, device):
    model.train()
    running, seen = 0.0, 0
    for features, heights in loader:
        features = features.to(device, non_blocking=True)
        heights = heights.to(device, non_blocking=True)
        with torch.autocast("cuda", dtype=torch.float16):
            loss = nn.functional.smooth_l1_loss(model(features), heights)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)
        running += loss.item() * heights.size(0)
        seen += heights.size(0)
        if math.isnan(running) or math.isinf(running):
            break  # expect: DDP011
    return running / max(seen, 1)


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)
    data = TensorDataset(torch.randn(8192, 32), torch.randn(8192, 1))
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=128, sampler=sampler, num_workers=2)
    model = DDP(nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.Linear(64, 1)).to(device),
                device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    scaler = torch.cuda.amp.GradScaler()
    for epoch in range(20):
        sampler.set_epoch(epoch)
        mean_loss = run_epoch(model, loader, optimizer, scaler, device)
        if dist.get_rank() == 0:
            print(f"epoch {epoch}: loss {mean_loss:.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

"""Device picked the single-GPU way; AMP training loop with gradient accumulation."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

ACCUM = 4


def main():
    dist.init_process_group(backend="nccl")
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")  # expect: DDP020
    model = DDP(nn.Linear(64, 8).to(device))
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    scaler = torch.cuda.amp.GradScaler()
    data = TensorDataset(torch.randn(8192, 64), torch.randint(0, 8, (8192,)))
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=32, sampler=sampler, num_workers=int(os.cpu_count() or 1))
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for step, (x, y) in enumerate(loader):
            x, y = x.to(device), y.to(device)
            sync = (step + 1) % ACCUM == 0
            with torch.autocast("cuda", dtype=torch.float16):
                loss = nn.functional.cross_entropy(model(x), y)
            if sync:
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()
                optimizer.zero_grad()
            else:
                with model.no_sync():
                    scaler.scale(loss).backward()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

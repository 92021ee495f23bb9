"""The epoch helper renames its loader (`batches = loader`) before iterating it; the
shuffling DistributedSampler behind it never gets `set_epoch`."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def run_epoch(model, loader, optimizer, scaler, log_every=100):
    model.train()
    batches = loader
    for it, (x, y) in enumerate(batches):
        x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
        with torch.autocast("cuda", dtype=torch.float16):
            loss = nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        if it % log_every == 0 and dist.get_rank() == 0:
            print(it, loss.item())


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    data = TensorDataset(torch.randn(10000, 64), torch.randn(10000, 1))
    loader = DataLoader(data, batch_size=128, sampler=DistributedSampler(data, shuffle=True))
    model = DDP(nn.Sequential(nn.Linear(64, 256), nn.GELU(), nn.Linear(256, 1)).cuda(),
                device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    scaler = torch.cuda.amp.GradScaler()
    for epoch in range(20):  # expect: DDP002
        run_epoch(model, loader, optimizer, scaler)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

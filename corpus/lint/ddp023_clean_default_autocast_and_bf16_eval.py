"""Trains with default autocast (float16 on CUDA) + GradScaler; evaluates in bf16 too."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


@torch.no_grad()
def evaluate(model, x, y):
    with torch.autocast("cuda", dtype=torch.bfloat16):
        return nn.functional.cross_entropy(model(x), y).item()


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)

    data = TensorDataset(torch.randn(4096, 32), torch.randint(0, 3, (4096,)))
    held_out = torch.randn(256, 32, device=device), torch.randint(0, 3, (256,), device=device)
    model = DDP(nn.Linear(32, 3).to(device), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    scaler = torch.amp.GradScaler("cuda")

    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=64, sampler=sampler)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for x, y in loader:
            with torch.autocast("cuda"):
                loss = nn.functional.cross_entropy(model(x.to(device)), y.to(device))
            optimizer.zero_grad()
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        held_out_loss = evaluate(model.module, *held_out)
        if dist.get_rank() == 0:
            print(f"epoch {epoch}: held-out loss on rank 0's copy {held_out_loss:.3f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

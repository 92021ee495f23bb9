"""Leaving the training loop after the step's `backward()` on a value every rank agrees on:
the non-finite flag is all-reduced before the test, and the step budget is a counter that
advances alike on every rank. A `continue` after the backward skips nothing that follows."""
import math
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def run_epoch(model, loader, optimizer, device, max_steps, step):
    model.train()
    for tokens, labels in loader:
        tokens, labels = tokens.to(device), labels.to(device)
        loss = nn.functional.cross_entropy(model(tokens), labels)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        step += 1
        bad = torch.tensor([0.0 if math.isfinite(loss.item()) else 1.0], device=device)
        dist.all_reduce(bad)
        if bad.item() > 0:
            break
        if step >= max_steps:
            break
        if loss.item() > 10.0:
            continue
    return step


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)
    data = TensorDataset(torch.randn(4096, 64), torch.randint(0, 10, (4096,)))
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=64, sampler=sampler)
    model = DDP(nn.Linear(64, 10).to(device), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    step = 0
    for epoch in range(10):
        sampler.set_epoch(epoch)
        step = run_epoch(model, loader, optimizer, device, 2000, step)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

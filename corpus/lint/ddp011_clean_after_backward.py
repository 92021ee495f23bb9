"""Skipping the optimizer step on a non-finite gradient norm: decided after backward, on
synchronised gradients; an iterator exhausted the same way on every rank."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    blob = torch.load("train.pt")
    train_set = TensorDataset(blob["x"], blob["y"])
    model = DDP(nn.Linear(32, 8).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    sampler = DistributedSampler(train_set, drop_last=True)
    loader = DataLoader(train_set, batch_size=64, sampler=sampler)
    steps_per_epoch = len(loader)
    for epoch in range(10):
        sampler.set_epoch(epoch)
        batches = iter(loader)
        for _ in range(steps_per_epoch):
            try:
                x, y = next(batches)
            except StopIteration:
                break
            x, y = x.cuda(local_rank), y.cuda(local_rank)
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            grad_norm = nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            if not torch.isfinite(grad_norm):
                optimizer.zero_grad(set_to_none=True)
                continue
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

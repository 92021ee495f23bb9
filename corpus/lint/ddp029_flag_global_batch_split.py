"""Pretraining script for torchrun: the configured batch is the global one, split over
what the script takes for the number of processes."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def parse():
    parser = argparse.ArgumentParser()
    parser.add_argument("--global-batch-size", type=int, default=1024)
    parser.add_argument("--epochs", type=int, default=100)
    return parser.parse_args()


def main():
    args = parse()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend="nccl")
    per_gpu_batch = args.global_batch_size // torch.cuda.device_count()  # expect: DDP029
    dataset = TensorDataset(torch.randn(50000, 256), torch.randn(50000, 256))
    sampler = DistributedSampler(dataset, shuffle=True, drop_last=True)
    loader = DataLoader(dataset, batch_size=per_gpu_batch, sampler=sampler, num_workers=4)
    model = nn.Sequential(nn.Linear(256, 1024), nn.GELU(), nn.Linear(1024, 256))
    model = DDP(model.cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1.5e-4)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for x, target in loader:
            x, target = x.cuda(local_rank), target.cuda(local_rank)
            loss = nn.functional.mse_loss(model(x), target)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

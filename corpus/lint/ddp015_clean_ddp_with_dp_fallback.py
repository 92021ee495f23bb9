"""Trainer that uses DDP under torchrun and falls back to DataParallel when started with
plain `python train.py` on a multi-GPU box (the launcher decides)."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, RandomSampler, TensorDataset


def setup():
    if "LOCAL_RANK" not in os.environ:
        return None
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    return local_rank


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=3)
    args = parser.parse_args()
    local_rank = setup()

    dataset = TensorDataset(torch.randn(4096, 16), torch.randint(0, 4, (4096,)))
    if local_rank is not None:
        sampler = DistributedSampler(dataset, shuffle=True, drop_last=True)
    else:
        sampler = RandomSampler(dataset)
    loader = DataLoader(dataset, batch_size=64, sampler=sampler)

    model = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 4)).cuda()
    if local_rank is not None:
        model = DDP(model, device_ids=[local_rank])
    elif torch.cuda.device_count() > 1:
        model = nn.DataParallel(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)

    for epoch in range(args.epochs):
        if local_rank is not None:
            sampler.set_epoch(epoch)
        for x, y in loader:
            x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    if local_rank is not None:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()

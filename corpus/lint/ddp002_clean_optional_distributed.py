"""Runs with or without torchrun; the dataset is prepared by rank 0 first."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def prepare_dataset(root):
    path = os.path.join(root, "features.pt")
    if not os.path.exists(path):
        torch.save(torch.randn(1000, 6), path + ".tmp")
        os.replace(path + ".tmp", path)


def load_dataset(root):
    features = torch.load(os.path.join(root, "features.pt"))
    return TensorDataset(features, torch.randint(0, 2, (1000,)))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="/tmp/data")
    parser.add_argument("--epochs", type=int, default=8)
    args = parser.parse_args()
    distributed = "WORLD_SIZE" in os.environ
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    torch.cuda.set_device(local_rank)
    if distributed:
        dist.init_process_group("nccl")
    if not distributed or dist.get_rank() == 0:
        prepare_dataset(args.data)
    if distributed:
        dist.barrier()
    dataset = load_dataset(args.data)
    sampler = DistributedSampler(dataset, drop_last=True) if distributed else None
    loader = DataLoader(dataset, batch_size=20, sampler=sampler, shuffle=sampler is None)
    model = nn.Linear(6, 2).cuda(local_rank)
    if distributed:
        model = DDP(model, device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(args.epochs):
        if sampler is not None:
            sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.cuda(local_rank)), y.cuda(local_rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    if distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()

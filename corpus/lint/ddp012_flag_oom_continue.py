"""Large-batch training that tries to ride out OOMs by skipping the batch."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=512)
    return parser.parse_args()


def main():
    args = parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    blob = torch.load("train.pt")
    train_set = TensorDataset(blob["x"], blob["y"])
    model = nn.Sequential(nn.Linear(1024, 4096), nn.GELU(), nn.Linear(4096, 100))
    model = DDP(model.cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    sampler = DistributedSampler(train_set, drop_last=True)
    loader = DataLoader(train_set, batch_size=args.batch_size, sampler=sampler, pin_memory=True)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            x, y = x.cuda(local_rank, non_blocking=True), y.cuda(local_rank, non_blocking=True)
            optimizer.zero_grad(set_to_none=True)
            try:
                loss = nn.functional.cross_entropy(model(x), y)
                loss.backward()
            except torch.cuda.OutOfMemoryError:  # expect: DDP012
                print(f"rank {dist.get_rank()}: OOM, skipping batch")
                torch.cuda.empty_cache()
                continue
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

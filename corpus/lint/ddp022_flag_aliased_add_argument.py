"""An older-style script whose options are declared through an alias of `add_argument`."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def get_args():
    parser = argparse.ArgumentParser(description="DDP training")
    arg = parser.add_argument
    arg("--local_rank", type=int, default=-1)  # expect: DDP022
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--out", default="model.pt")
    return parser.parse_args()


def main():
    args = get_args()
    torch.cuda.set_device(args.local_rank)
    dist.init_process_group(backend="nccl", init_method="env://")

    dataset = TensorDataset(torch.randn(4096, 20), torch.randn(4096, 1))
    model = nn.Sequential(nn.Linear(20, 50), nn.Tanh(), nn.Linear(50, 1)).cuda(args.local_rank)
    model = DDP(model, device_ids=[args.local_rank], output_device=args.local_rank)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)

    sampler = DistributedSampler(dataset, shuffle=True, drop_last=True)
    loader = DataLoader(dataset, batch_size=32, sampler=sampler)

    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            x = x.cuda(args.local_rank, non_blocking=True)
            y = y.cuda(args.local_rank, non_blocking=True)
            loss = nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            tmp = args.out + ".tmp"
            torch.save(model.module.state_dict(), tmp)
            os.replace(tmp, args.out)
        dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

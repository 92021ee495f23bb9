"""torchrun script that moves everything with a bare .cuda() and never selects the GPU."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def parse():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--lr", type=float, default=0.01)
    return parser.parse_args()


def main():
    args = parse()
    local_rank = int(os.environ["LOCAL_RANK"])
    dist.init_process_group("nccl")
    if local_rank == 0:
        print("world size", dist.get_world_size())

    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 2)).cuda()  # expect: DDP020
    model = DDP(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
    data = TensorDataset(torch.randn(4096, 32), torch.randint(0, 2, (4096,)))
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=64, sampler=sampler)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            x = x.cuda(non_blocking=True)  # expect: DDP020
            y = y.cuda(non_blocking=True)  # expect: DDP020
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

"""The training loader is built inside the epoch loop with an inline sampler seeded from
the command line; the seed never changes between epochs."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=12)
    args = parser.parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    images = TensorDataset(torch.randn(9000, 3, 12, 12), torch.randint(0, 4, (9000,)))
    model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU(), nn.Flatten(), nn.Linear(800, 4))
    model = DDP(model.cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(args.epochs):  # expect: DDP002
        loader = DataLoader(
            images,
            batch_size=90,
            sampler=DistributedSampler(images, seed=args.seed, drop_last=True),
            num_workers=2,
        )
        model.train()
        for step, (x, y) in enumerate(loader):
            x, y = x.cuda(local_rank), y.cuda(local_rank)
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

"""Train: `python train.py` on one GPU, `torchrun --nproc_per_node=4 train.py --n_gpus 4`."""
import argparse
import os

import torch
import torch.distributed as dist

from data import Data
from model import Model


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n_gpus", type=int, default=1)
    parser.add_argument("--epochs", type=int, default=100)
    parser.add_argument("--save", default="experiment")
    parser.add_argument("--resume", action="store_true")
    args = parser.parse_args()
    os.makedirs(args.save, exist_ok=True)
    data = Data(args)
    model = Model(args, data)
    rank = dist.get_rank() if args.n_gpus > 1 else 0
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    if args.resume:
        optimizer.load_state_dict(torch.load(os.path.join(args.save, "optimizer.pt")))  # expect: DDP033
    for epoch in range(args.epochs):
        if data.sampler is not None:
            data.sampler.set_epoch(epoch)
        for lr, hr in data.loader:
            loss = (model(lr.cuda()) - hr.cuda()).abs().mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        model.save(args, rank)
        if rank == 0:
            torch.save(optimizer.state_dict(), os.path.join(args.save, "optimizer.pt"))  # expect: DDP014


if __name__ == "__main__":
    main()

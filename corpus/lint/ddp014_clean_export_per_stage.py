"""A two-stage trainer (plain, then weight-averaged) that, after training, exports the model
of each stage once: the loop over stages picks the file by the stage flag, so no export is
written twice. The per-epoch resume file is a different matter and is written atomically."""
import argparse
import os
from pathlib import Path

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def train_one_epoch(model, loader, optimizer):
    model.train()
    for x, y in loader:
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--out", default="runs/exp")
    parser.add_argument("--average", action="store_true")
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    data = TensorDataset(torch.randn(256, 8), torch.randn(256, 1))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=16, sampler=sampler)
    model = DDP(nn.Linear(8, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    averaged = torch.optim.swa_utils.AveragedModel(model.module)

    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        train_one_epoch(model, loader, optimizer)
        averaged.update_parameters(model.module)
        if rank == 0:
            tmp = os.path.join(args.out, "resume.pt.tmp")
            torch.save({"epoch": epoch, "model": model.module.state_dict()}, tmp)
            os.replace(tmp, os.path.join(args.out, "resume.pt"))

    stages = [False]
    if args.average:
        stages.append(True)
    for use_average in stages:
        if rank != 0:
            continue
        weights = averaged.module if use_average else model.module
        if use_average:
            torch.save(weights.state_dict(), Path(args.out) / "model_averaged.pt")
        else:
            torch.save(weights.state_dict(), Path(args.out) / "model.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

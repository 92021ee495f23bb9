"""Train the pose refiner, one task per GPU: `srun --ntasks=16 --gpus-per-task=1 python
train_pose.py --resume`. Every task sees its own GPU as `cuda:0`."""
import argparse
import os

import torch
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

from utils.distributed import init_distributed, is_main

CKPT = "runs/refiner/checkpoint.pth"


def build_model():
    return nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 7))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--resume", action="store_true")
    args = parser.parse_args()
    rank, world_size = init_distributed()
    device = torch.device("cuda:0")
    model = build_model().to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    start = 0
    if args.resume and os.path.exists(CKPT):
        ckpt = torch.load(CKPT)
        model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        start = ckpt["epoch"] + 1
    model = DDP(model, device_ids=[0])
    data = TensorDataset(torch.randn(4096, 64), torch.randn(4096, 7))
    sampler = DistributedSampler(data, num_replicas=world_size, rank=rank)
    loader = DataLoader(data, batch_size=64, sampler=sampler, drop_last=True)
    for epoch in range(start, args.epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if is_main():
            os.makedirs(os.path.dirname(CKPT), exist_ok=True)
            state = {"model": model.module.state_dict(), "optimizer": optimizer.state_dict(),
                     "epoch": epoch}
            torch.save(state, CKPT + ".tmp")
            os.replace(CKPT + ".tmp", CKPT)


if __name__ == "__main__":
    main()

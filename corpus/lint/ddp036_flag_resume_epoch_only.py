"""Resumes the model and the epoch from `last.pth`, but the checkpoint never holds the
AdamW state: every restart begins with fresh moment estimates."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def build_model():
    return nn.Sequential(nn.Linear(80, 256), nn.GELU(), nn.Linear(256, 40))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=50)
    parser.add_argument("--out", default="exp")
    args = parser.parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    blob = torch.load("feats.pt", map_location="cpu")
    dataset = TensorDataset(blob["x"], blob["y"])
    model = build_model().cuda(local_rank)
    last = os.path.join(args.out, "last.pth")
    start_epoch = 0
    if os.path.exists(last):
        checkpoint = torch.load(last, map_location="cpu")  # expect: DDP036
        model.load_state_dict(checkpoint["model"])
        start_epoch = checkpoint["epoch"] + 1
    model = DDP(model, device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-4, weight_decay=0.05)
    sampler = DistributedSampler(dataset, drop_last=True)
    loader = DataLoader(dataset, batch_size=64, sampler=sampler)
    for epoch in range(start_epoch, args.epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.cuda(local_rank)), y.cuda(local_rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            tmp = last + ".tmp"
            torch.save({"model": model.module.state_dict(), "epoch": epoch}, tmp)
            os.replace(tmp, last)
        dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

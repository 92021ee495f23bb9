"""Resuming mid-epoch: batches are skipped by step count, the same on every rank."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--resume", default="")
    parser.add_argument("--max-steps", type=int, default=10000)
    args = parser.parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    blob = torch.load("train.pt")
    train_set = TensorDataset(blob["x"], blob["y"])
    model = DDP(nn.Linear(32, 8).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    start_epoch, start_step = 0, 0
    if args.resume:
        state = torch.load(args.resume, map_location=f"cuda:{local_rank}")
        model.module.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        start_epoch, start_step = state["epoch"], state["step"]
    sampler = DistributedSampler(train_set, drop_last=True)
    loader = DataLoader(train_set, batch_size=64, sampler=sampler)
    global_step = 0
    for epoch in range(start_epoch, 100):
        sampler.set_epoch(epoch)
        for step, (x, y) in enumerate(loader):
            if epoch == start_epoch and step < start_step:
                continue
            if global_step >= args.max_steps:
                break
            x, y = x.cuda(local_rank), y.cuda(local_rank)
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            global_step += 1
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

"""Keeps the last three checkpoints in rotating slots: each save writes the slot after the
one written before it, so a crash mid-write truncates the oldest slot and the last good
checkpoint survives in another."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--max_save", type=int, default=3)
    parser.add_argument("--resume", default="")
    args = parser.parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = DDP(nn.Linear(63, 4).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=5e-4)
    if args.resume:
        state = torch.load(args.resume, map_location="cpu")
        model.module.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
    train_cnt = 0
    for epoch in range(200):
        for _ in range(100):
            loss = model(torch.randn(1024, 63).cuda()).square().mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            train_cnt += 1
        if dist.get_rank() == 0:
            slot = f"ckpt/chkpt_{train_cnt % args.max_save + 1}.pt"
            state = {"model": model.module.state_dict(), "optimizer": optimizer.state_dict()}
            torch.save(state, slot)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

"""A language-model trainer restores Adam's moments on the main process only (its helper
prints the restored step): the other ranks start with empty moments and apply other
updates from the first step on."""

import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def train_steps(model, optimizer, steps):
    for _ in range(steps):
        tokens = torch.randint(0, 100, (4, 32), device="cuda")
        logits = model(tokens)
        loss = nn.functional.cross_entropy(logits.view(-1, 100), tokens.view(-1))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()


def main():
    dist.init_process_group(backend="nccl")
    rank = int(os.environ["RANK"])
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    net = nn.Sequential(nn.Embedding(100, 64), nn.Linear(64, 100)).cuda()
    model = DDP(net, device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    if rank == 0 and os.path.exists("ckpt/optim.pt"):
        optimizer.load_state_dict(torch.load("ckpt/optim.pt", map_location="cpu"))  # expect: DDP044
        print("restored optimizer at step", optimizer.state_dict()["state"][0]["step"])
    train_steps(model, optimizer, 1000)


if __name__ == "__main__":
    main()

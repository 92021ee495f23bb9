"""Generative recommender that runs its forward through `model.module` on purpose and
averages every gradient itself before the step."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP


def train(model, loader, optimizer, world_size):
    for item_ids, targets in loader:
        logits = model.module(item_ids.cuda())
        loss = nn.functional.cross_entropy(logits.flatten(0, 1), targets.cuda().flatten())
        optimizer.zero_grad()
        loss.backward()
        for param in model.module.parameters():
            if param.grad is not None:
                dist.all_reduce(param.grad)
                param.grad /= world_size
        optimizer.step()


def main(loader):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = DDP(nn.Sequential(nn.Embedding(50000, 256), nn.Linear(256, 50000)).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    train(model, loader, optimizer, dist.get_world_size())

"""Step-budgeted trainer: a logging helper averages the loss; the budget is the same on every rank."""

import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler

from speech import Utterances


def mean_over_ranks(value):
    t = torch.tensor([value], device="cuda")
    dist.all_reduce(t)
    mean = t.item() / dist.get_world_size()
    if dist.get_rank() == 0:
        print(f"loss {mean:.4f}")
    return mean


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)
    net = nn.Sequential(nn.Linear(80, 512), nn.ReLU(), nn.Linear(512, 40))
    model = DDP(net.to(device), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=5e-4)
    utterances = Utterances("train.lst")
    sampler = DistributedSampler(utterances, shuffle=True, drop_last=True)
    loader = DataLoader(utterances, batch_size=32, sampler=sampler)
    max_steps = 20000
    sampler.set_epoch(0)
    for step, (feats, targets) in enumerate(loader):
        feats, targets = feats.to(device), targets.to(device)
        loss = nn.functional.cross_entropy(model(feats).transpose(1, 2), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        done = step + 1 >= max_steps
        mean_over_ranks(loss.item())
        if done:
            break
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

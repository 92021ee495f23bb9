"""Rank 0 reads the step to resume from and broadcasts it: after the broadcast every rank
holds rank 0's value, so the loop runs the same number of steps everywhere."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def read_start_step(path):
    with open(path) as handle:
        return int(handle.read().strip())


def main():
    dist.init_process_group(backend="nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(nn.Linear(16, 16).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters())
    start_step = 0
    if dist.get_rank() == 0 and os.path.exists("step.txt"):
        start_step = read_start_step("step.txt")
    box = [start_step]
    dist.broadcast_object_list(box, src=0)
    start_step = box[0]
    for step in range(start_step, 1000):
        loss = model(torch.randn(4, 16, device="cuda")).square().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()

"""Freezing happens only in the single-GPU branch, where there is no DDP wrapper."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main(distributed, freeze):
    net = nn.Sequential(nn.Linear(32, 128), nn.ReLU(), nn.Linear(128, 10))
    if distributed:
        local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(local_rank)
        dist.init_process_group("nccl")
        model = DDP(net.cuda(local_rank), device_ids=[local_rank])
    else:
        model = net.cuda()
        if freeze:
            for p in model[0].parameters():
                p.requires_grad = False
    optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
    for _ in range(100):
        loss = model(torch.randn(64, 32, device="cuda")).square().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main(distributed="LOCAL_RANK" in os.environ, freeze=False)
